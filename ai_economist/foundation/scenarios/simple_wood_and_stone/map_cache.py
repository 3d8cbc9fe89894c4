"""Float32 and padded copies of the world maps for the observations, refreshed per layer.

``Maps.state`` stacks and casts every layer, and :func:`dynamics.padded_views` pads them
all, on each call. Most steps change no layer or one (regrowth, a gather, a build), so
:class:`MapCache` keeps the last result and, when ``Maps.version`` moved, copies it and
rewrites only the layers whose ``Maps.layer_stamps()`` entry moved (the same float32 values:
each layer is cast the same way). The cached arrays are never edited after they are built,
so observations that hold them (the agents' windows are views of the padded maps) keep
their values. Like ``Maps.version``, a layer edited in place through ``Maps.get`` is not
seen: write it back with ``Maps.set``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.simple_wood_and_stone import dynamics


class MapCache:
    """Caches of ``maps.state`` and of the padded maps (see the module docstring)."""

    def __init__(self) -> None:
        self._state: tuple[int, np.ndarray, tuple[int, ...]] | None = None
        self._padded: tuple[int, int, np.ndarray, np.ndarray, tuple[int, ...]] | None = None

    def state(self, maps: Any) -> np.ndarray:
        """A fresh copy of ``maps.state`` (float32 (n_maps, H, W))."""
        cached = self._state
        if cached is None or cached[0] != maps.version:
            stamps = maps.layer_stamps()
            if cached is not None and len(cached[2]) == len(stamps):
                state = cached[1].copy()
                for i, name in self._changed(maps, cached[2], stamps):
                    state[i] = maps.get(name)
            else:
                state = maps.state
            cached = self._state = (maps.version, state, stamps)
        return cached[1].copy()

    def padded(self, maps: Any, w: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`dynamics.padded_views` of every layer (owners and an empty location
        channel as the index maps): the cached padded maps and a fresh copy of the index
        maps, whose location channel the caller fills."""
        cached = self._padded
        if cached is None or cached[0] != maps.version:
            stamps = maps.layer_stamps()
            if cached is not None and cached[1] == w and len(cached[4]) == len(stamps):
                padded, padded_idx = self._refresh(maps, w, cached, stamps)
            else:
                owners = dynamics.code_agent_indices(maps.owner_state)
                empty_locs = np.zeros((1, *maps.size), dtype=np.int16)
                padded, padded_idx = dynamics.padded_views(
                    [maps.get(k) for k in maps.keys()], np.concatenate([owners, empty_locs]), w
                )
            cached = self._padded = (maps.version, w, padded, padded_idx, stamps)
        return cached[2], cached[3].copy()

    @staticmethod
    def _changed(maps: Any, old: tuple[int, ...], new: tuple[int, ...]) -> list[tuple[int, str]]:
        return [(i, k) for i, (k, a, b) in enumerate(zip(maps.keys(), old, new)) if a != b]

    def _refresh(
        self, maps: Any, w: int, cached: tuple, stamps: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        h, wd = maps.size
        padded, padded_idx = cached[2].copy(), cached[3]
        private = set(maps.private_layers)
        owners_changed = False
        for i, name in self._changed(maps, cached[4], stamps):
            padded[i, w : w + h, w : w + wd] = maps.get(name)
            owners_changed = owners_changed or name in private
        if owners_changed:
            padded_idx = padded_idx.copy()
            padded_idx[:-1, w : w + h, w : w + wd] = dynamics.code_agent_indices(maps.owner_state)
        return padded, padded_idx
