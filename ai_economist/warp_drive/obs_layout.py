"""What the parts of a policy's flat observation vector are: an optional declaration an env
makes so that models can treat spatial maps as maps.

The trainer's protocol hands every agent one flat float vector (``PolicySpec.obs_dim``).  An
env that packs maps into it may also implement :class:`LayoutEnv`: ``observation_layout(tag)``
lists the vector's segments in order, each with its shape -- ``(k,)`` for plain values,
``(C, H, W)`` for a stack of spatial maps -- and its kind: ``"value"`` (numbers) or
``"index"`` (small non-negative integer codes, e.g. which agent stands on a cell, that a model
embeds instead of reading as magnitudes).  Nothing here names a scenario; a model derives
which inputs are spatial from the shapes alone (:func:`spatial_segments`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

KINDS = ("value", "index")


@dataclass(frozen=True)
class ObsSegment:
    """One consecutive part of a flat observation vector.

    Attributes:
        name: the field it holds (e.g. ``"world-map"``), for messages.
        shape: ``(k,)`` for k plain values or ``(C, H, W)`` for C maps of H x W cells, raveled
            in C order.
        kind: ``"value"`` or ``"index"`` (integer codes ``>= 0``).
    """

    name: str
    shape: tuple[int, ...]
    kind: str = "value"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"observation segment {self.name!r}: kind must be one of {KINDS}")
        if len(self.shape) not in (1, 3) or any(int(n) < 1 for n in self.shape):
            raise ValueError(
                f"observation segment {self.name!r}: shape must be (k,) or (C, H, W) of "
                f"positive sizes, got {self.shape!r}"
            )

    @property
    def size(self) -> int:
        """Number of entries of the flat vector it covers."""
        return math.prod(self.shape)

    @property
    def spatial(self) -> bool:
        """A stack of maps ``(C, H, W)``."""
        return len(self.shape) == 3

    def to_plain(self) -> list:
        """``[name, shape, kind]`` with plain types (for checkpoints)."""
        return [self.name, [int(n) for n in self.shape], self.kind]

    @classmethod
    def from_plain(cls, value: Sequence) -> ObsSegment:
        """Undo :meth:`to_plain`."""
        name, shape, kind = value
        return cls(str(name), tuple(int(n) for n in shape), str(kind))


Layout = tuple[ObsSegment, ...]


@runtime_checkable
class LayoutEnv(Protocol):
    """An env that declares the segments of each policy's observation vector."""

    def observation_layout(self, tag: str) -> Sequence[ObsSegment]:
        """The segments of policy ``tag``'s observation vector, in order."""


def flat_layout(obs_dim: int) -> Layout:
    """The layout of an env that declares none: one segment of plain values."""
    return (ObsSegment("obs", (int(obs_dim),)),)


def check_layout(layout: Sequence[ObsSegment], obs_dim: int, where: str) -> Layout:
    """``layout`` as a tuple after checking that it covers exactly ``obs_dim`` entries and
    that its maps share one H x W (raises ValueError naming ``where`` otherwise)."""
    layout = tuple(layout)
    total = sum(s.size for s in layout)
    if not layout or total != obs_dim:
        sizes = ", ".join(f"{s.name} {s.shape}" for s in layout) or "none"
        raise ValueError(
            f"{where}: the observation layout covers {total} entries ({sizes}) but the "
            f"observation vector has {obs_dim}"
        )
    grids = {s.shape[1:] for s in layout if s.spatial}
    if len(grids) > 1:
        raise ValueError(
            f"{where}: the observation's maps must share one height x width to be stacked, "
            f"got {sorted(grids)}"
        )
    return layout


def env_layout(env: Any, tag: str, obs_dim: int) -> Layout:
    """Policy ``tag``'s checked layout as ``env`` declares it, or :func:`flat_layout`."""
    if isinstance(env, LayoutEnv):
        return check_layout(env.observation_layout(tag), obs_dim, f"policy '{tag}'")
    return flat_layout(obs_dim)


def layout_of_arrays(named: Sequence[tuple[str, Any]]) -> Layout:
    """The layout of arrays raveled one after another: 1-D arrays (or scalars) are plain
    values, 3-D arrays maps; integer dtypes are ``"index"``.  Other ranks raise ValueError."""
    out = []
    for name, array in named:
        shape = tuple(int(n) for n in getattr(array, "shape", ())) or (1,)
        if len(shape) not in (1, 3):
            raise ValueError(f"observation field {name!r}: shape {shape} is neither (k,) nor 3-D")
        kind = "index" if getattr(getattr(array, "dtype", None), "kind", "f") in "iu" else "value"
        out.append(ObsSegment(name, shape, kind))
    return tuple(out)


def spatial_segments(layout: Sequence[ObsSegment]) -> tuple[list[int], list[int]]:
    """Indices of ``layout``'s map segments and of its plain segments."""
    maps = [i for i, s in enumerate(layout) if s.spatial]
    return maps, [i for i, s in enumerate(layout) if not s.spatial]
