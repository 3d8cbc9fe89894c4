"""Reader of the gather-trade-build layout files (``map_txt/*.txt``).

Format (as in AI Economist 1.7.1): the map's rows separated by ``;``, one character per cell:
``W`` a wood source (and its first wood), ``S`` a stone source, ``@`` water, a space an empty
cell. ``A`` (found in ``top_wood_bottom_stone_14x14.txt``, unused by 1.7.1) is read as an
empty cell. One trailing ``;`` and line breaks next to a ``;`` or at the end are ignored.

Unlike 1.7.1, which read any other character as an empty cell and any short row as padded
with empty cells, an unknown character or rows of different lengths raise
:class:`LayoutFileError` naming the file, the line (row) and the character (column).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAP_DIR = Path(__file__).resolve().parent / "map_txt"
SYMBOLS = {"W": "Wood", "S": "Stone", "@": "Water"}
EMPTY_SYMBOLS = (" ", "A")


class LayoutFileError(ValueError):
    """A layout file that cannot be read: the message names the file, line and character."""


@dataclass(frozen=True)
class Layout:
    """A parsed layout: one bool (H, W) map per entity (``Wood``, ``Stone``, ``Water``)."""

    path: Path
    maps: dict[str, np.ndarray]

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, columns)``."""
        return self.maps["Wood"].shape


def available_layouts() -> list[str]:
    """Names of the layout files shipped with the package."""
    return sorted(p.name for p in MAP_DIR.glob("*.txt"))


def resolve_layout_path(env_layout_file: str | Path) -> Path:
    """The file for ``env_layout_file``: a bare name looks in the packaged ``map_txt/``;
    a path with a directory part is used as it is.

    Raises:
        FileNotFoundError: no such file (a bare name lists the packaged ones, close matches first).
    """
    name = str(env_layout_file)
    candidate = Path(name)
    if "/" in name or os.sep in name or candidate.is_absolute():  # ./name.txt is a path too
        if not candidate.is_file():
            raise FileNotFoundError(f"env_layout_file: no layout file at {candidate}")
        return candidate
    packaged = MAP_DIR / name
    if packaged.is_file():
        return packaged
    known = available_layouts()
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    if candidate.is_file():  # a bare name means a packaged layout, even if a local file has it
        hint += (
            f" A file {name!r} is in the current folder ({Path.cwd()}): write './{name}' to "
            "use it (a bare name means a packaged layout)."
        )
    raise FileNotFoundError(
        f"env_layout_file: no packaged layout named {name!r}.{hint} Packaged layouts: {known}"
    )


def parse_layout(text: str, path: Path | str = "<string>") -> Layout:
    """Parse the text of a layout file (see the module docstring)."""
    body = text.rstrip("\r\n")
    if body.endswith(";"):
        body = body[:-1]
    rows = [row.strip("\r\n") for row in body.split(";")]
    if not rows or not rows[0]:
        raise LayoutFileError(f"{path}: line 1: the layout is empty")
    width = len(rows[0])
    maps = {name: np.zeros((len(rows), width), dtype=bool) for name in SYMBOLS.values()}
    for r, row in enumerate(rows):
        if len(row) != width:
            raise LayoutFileError(
                f"{path}: line {r + 1}: ragged rows: this row has {len(row)} characters, "
                f"line 1 has {width}; every row must have the same length"
            )
        for c, symbol in enumerate(row):
            name = SYMBOLS.get(symbol)
            if name is not None:
                maps[name][r, c] = True
            elif symbol not in EMPTY_SYMBOLS:
                raise LayoutFileError(
                    f"{path}: line {r + 1}, character {c + 1}: unknown character {symbol!r}; "
                    f"expected one of {sorted(SYMBOLS)} or a space (rows end with ';')"
                )
    return Layout(Path(path), maps)


def load_layout(env_layout_file: str | Path) -> Layout:
    """Read and parse a layout file given by bare name (packaged) or by path."""
    path = resolve_layout_path(env_layout_file)
    return parse_layout(path.read_text(encoding="utf-8"), path)
