"""Saving and loading episode (dense) logs.

* ``*.json``: plain JSON; ``*.json.gz`` / ``*.gz``: gzip-compressed JSON (standard library);
* any other path: lz4-frame-compressed JSON, as in Foundation 1.7.1. This needs the optional
  ``lz4`` package: ``pip install "ai-economist[logs]"``.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from ai_economist.foundation.base.episode_logs import to_jsonable

_LZ4_HINT = (
    'Saving/loading lz4 episode logs needs the lz4 package: pip install "ai-economist[logs]"'
)


def _lz4_frame() -> Any:
    try:
        import lz4.frame
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise ImportError(f"{_LZ4_HINT} (or use a .json / .json.gz path)") from err
    return lz4.frame


def _format(path: str) -> str:
    lower = path.lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".gz"):
        return "gzip"
    return "lz4"


def save_episode_log(
    game_object: Any, filepath: str | os.PathLike, compression_level: int = 16
) -> None:
    """Write an episode's dense log.

    Args:
        game_object: an environment (its ``previous_episode_dense_log`` is saved) or a log dict.
        filepath: destination; the suffix picks the format (see the module docstring).
        compression_level: lz4/gzip compression level (clamped to 0..16 for lz4, 0..9 for gzip).
    """
    log = getattr(game_object, "previous_episode_dense_log", game_object)
    if not isinstance(log, dict):
        raise TypeError(
            f"Expected an environment or a dense-log dict, got {type(game_object).__name__}"
        )
    data = json.dumps(to_jsonable(log), ensure_ascii=False).encode("utf-8")
    path = os.fspath(filepath)
    kind = _format(path)
    if kind == "json":
        with open(path, "wb") as f:
            f.write(data)
    elif kind == "gzip":
        with gzip.open(path, "wb", compresslevel=min(max(int(compression_level), 0), 9)) as f:
            f.write(data)
    else:
        level = min(max(int(compression_level), 0), 16)
        with _lz4_frame().open(path, mode="wb", compression_level=level) as f:
            f.write(data)


def load_episode_log(filepath: str | os.PathLike) -> dict[str, Any]:
    """Read an episode log written by :func:`save_episode_log`."""
    path = os.fspath(filepath)
    kind = _format(path)
    if kind == "json":
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    if kind == "gzip":
        with gzip.open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    with _lz4_frame().open(path, mode="rb") as f:
        return json.loads(f.read().decode("utf-8"))
