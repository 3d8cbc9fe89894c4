"""Per-entity map layers with accessibility and occupancy bookkeeping.

Difference from Foundation 1.7.1: ``Maps.set_point`` on a blocking landmark updates only the
accessibility of that cell (1.7.1 broadcast the cell's scalar over the whole layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_agent import BaseAgent
from ai_economist.foundation.entities.landmarks import landmark_registry, source_block_for
from ai_economist.foundation.entities.resources import resource_registry


class Maps:
    """One (H, W) layer per map entity, plus accessibility and occupancy bookkeeping.

    Collectible resources get a float map and a ``<R>SourceBlock`` map. Public landmarks get
    a float map; blocking landmarks a float map and an accessibility layer; private
    landmarks ``{"owner": int16 (-1 = nobody), "health": float}`` and a layer that is true
    for the owner and for unowned cells.
    """

    def __init__(
        self,
        size: Sequence[int],
        n_agents: int,
        world_resources: Sequence[str],
        world_landmarks: Sequence[str],
    ) -> None:
        self.size = (int(size[0]), int(size[1]))
        self.sz_h, self.sz_w = self.size
        self.n_agents = int(n_agents)
        self.resources = list(world_resources)
        self.landmarks = list(world_landmarks)
        self._maps: dict[str, Any] = {}
        self._collectible: list[str] = []
        self._blocked: list[str] = []
        self._private: list[str] = []
        self._public: list[str] = []
        self._accessibility_lookup: dict[str, np.ndarray] = {}
        self._accessibility: np.ndarray | None = None
        self._idx_array = np.arange(self.n_agents)
        self._unoccupied = np.ones(self.size, dtype=bool)
        self._agent_locs: list[tuple[int, int] | None] = [None] * self.n_agents
        self._version = 0
        self._stamps: dict[str, int] = {}  # layer -> the version of its last write

        source_blocks = []
        for name in self.resources:
            if resource_registry.get(name).collectible:
                self._collectible.append(name)
                self._maps[name] = np.zeros(self.size)
                source_blocks.append(source_block_for(name).name)
        for name in self.landmarks + [b for b in source_blocks if b not in self.landmarks]:
            self._add_landmark(name)

    def _add_landmark(self, name: str) -> None:
        landmark = landmark_registry.get(name)()
        if landmark.private:
            self._private.append(name)
            self._maps[name] = {
                "owner": -np.ones(self.size, dtype=np.int16),
                "health": np.zeros(self.size),
            }
            self._accessibility_lookup[name] = np.ones((self.n_agents, *self.size), dtype=bool)
        elif landmark.blocking:
            self._blocked.append(name)
            self._maps[name] = np.zeros(self.size)
            self._accessibility_lookup[name] = np.ones((self.n_agents, *self.size), dtype=bool)
        else:
            self._public.append(name)
            self._maps[name] = np.zeros(self.size)

    # ------------------------------------------------------------------ whole maps
    @property
    def version(self) -> int:
        """A counter that changes whenever a map is written through ``clear``, ``set``,
        ``set_add``, ``set_point`` or ``set_point_add`` (observation caches key on it; an
        array returned by ``get`` and edited in place is not tracked: write it back with
        ``set``)."""
        return self._version

    @property
    def private_layers(self) -> tuple[str, ...]:
        """Names of the private landmarks (their ``owner_state`` rows, in that order)."""
        return tuple(self._private)

    def layer_stamp(self, entity_name: str) -> int:
        """The ``version`` of the last write to one layer (see :meth:`layer_stamps`)."""
        return self._stamps.get(entity_name, 0)

    def layer_stamps(self) -> tuple[int, ...]:
        """Per layer (in ``keys()`` order) the ``version`` of its last write through this
        class (0: never written), so caches can refresh only the layers that changed."""
        stamps = self._stamps
        return tuple(stamps.get(k, 0) for k in self._maps)

    def clear(self) -> None:
        """Zero every map (private landmarks: no owner) and make every cell accessible."""
        self._version += 1
        self._stamps = dict.fromkeys(self._maps, self._version)
        for layer in self._maps.values():
            if isinstance(layer, dict):
                layer["owner"][:] = -1
                layer["health"][:] = 0
            else:
                layer[:] = 0
        for layer in self._accessibility_lookup.values():
            layer[:] = True
        self._accessibility = None

    def keys(self) -> list[str]:
        """Names of all map layers, in insertion order."""
        return list(self._maps)

    def _check_name(self, entity_name: str) -> None:
        if entity_name not in self._maps:
            raise KeyError(f"No map for entity {entity_name!r}. Known maps: {self.keys()}")

    def get(self, entity_name: str, owner: bool = False) -> np.ndarray:
        """The map of an entity (for private landmarks: health, or owner if ``owner``)."""
        self._check_name(entity_name)
        if entity_name in self._private:
            return self._maps[entity_name]["owner" if owner else "health"]
        return self._maps[entity_name]

    def set(self, entity_name: str, map_state: Any) -> None:
        """Replace a map (clamped at >= 0). Private landmarks take ``{"owner", "health"}``."""
        self._check_name(entity_name)
        self._version += 1
        self._stamps[entity_name] = self._version
        if entity_name in self._private:
            self._set_private(entity_name, map_state)
            return
        map_state = np.asarray(map_state, dtype=float)
        if map_state.shape != self.size:
            raise ValueError(
                f"Map for {entity_name!r} must have shape {self.size}, got {map_state.shape}"
            )
        self._maps[entity_name] = np.maximum(0.0, map_state)
        if entity_name in self._blocked:
            free = self._maps[entity_name] <= 0
            self._accessibility_lookup[entity_name] = np.repeat(free[None], self.n_agents, axis=0)
            self._accessibility = None

    def _set_private(self, entity_name: str, map_state: Any) -> None:
        if not isinstance(map_state, dict) or {"owner", "health"} - set(map_state):
            raise TypeError(
                f"Private landmark {entity_name!r} needs a dict with 'owner' and 'health'"
            )
        health = np.maximum(0.0, np.asarray(map_state["health"], dtype=float))
        owner = np.array(map_state["owner"], dtype=np.int16)
        if health.shape != self.size or owner.shape != self.size:
            raise ValueError(f"Maps for {entity_name!r} must have shape {self.size}")
        owner[health <= 0] = -1
        if np.any(owner[health > 0] < 0) or np.any(owner >= self.n_agents):
            raise ValueError(
                f"Owners of {entity_name!r} must be in 0..{self.n_agents - 1} where health > 0"
            )
        self._maps[entity_name] = {"owner": owner, "health": health}
        self._accessibility_lookup[entity_name] = (owner[None] == -1) | (
            owner[None] == self._idx_array[:, None, None]
        )
        self._accessibility = None

    def set_add(self, entity_name: str, map_state: Any) -> None:
        """Add ``map_state`` to a (non-private) map."""
        if entity_name in self._private:
            raise ValueError(f"set_add is not supported for private landmark {entity_name!r}")
        self.set(entity_name, self.get(entity_name) + map_state)

    # -------------------------------------------------------------------- points
    def get_point(self, entity_name: str, r: int, c: int, owner: bool = False) -> Any:
        """The value of one cell (for private landmarks: health, or owner if ``owner``)."""
        return self.get(entity_name, owner=owner)[r, c]

    def set_point(
        self, entity_name: str, r: int, c: int, val: float, owner: int | None = None
    ) -> None:
        """Set one cell (clamped at >= 0). Private landmarks need ``owner`` (an agent index)."""
        self._check_name(entity_name)
        self._version += 1
        self._stamps[entity_name] = self._version
        if entity_name in self._private:
            self._set_private_point(entity_name, r, c, val, owner)
            return
        self._maps[entity_name][r, c] = max(0.0, float(val))
        if entity_name in self._blocked:
            # 1.7.1 assigned this scalar to the whole layer; only the cell changes here.
            self._accessibility_lookup[entity_name][:, r, c] = self._maps[entity_name][r, c] <= 0
            self._accessibility = None

    def _set_private_point(self, entity_name: str, r: int, c: int, val: float, owner: Any) -> None:
        if owner is None:
            raise ValueError(f"set_point on private landmark {entity_name!r} needs owner=")
        owner = int(owner)
        if not 0 <= owner < self.n_agents:
            raise ValueError(f"owner must be an agent index in 0..{self.n_agents - 1}, got {owner}")
        owners = self._maps[entity_name]["owner"]
        health = self._maps[entity_name]["health"]
        if owners[r, c] not in (-1, owner):
            raise ValueError(
                f"Cell ({r}, {c}) of {entity_name!r} is owned by agent {owners[r, c]}, not {owner}"
            )
        health[r, c] = max(0.0, float(val))
        owners[r, c] = owner if health[r, c] > 0 else -1
        layer = self._accessibility_lookup[entity_name]
        layer[:, r, c] = owners[r, c] == -1
        if owners[r, c] >= 0:
            layer[owners[r, c], r, c] = True
        self._accessibility = None

    def set_point_add(
        self, entity_name: str, r: int, c: int, value: float, owner: int | None = None
    ) -> None:
        """Add ``value`` to one cell."""
        self.set_point(entity_name, r, c, self.get_point(entity_name, r, c) + value, owner=owner)

    def is_accessible(self, r: int, c: int, agent_id: int) -> bool:
        """Whether agent ``agent_id`` may enter cell ``(r, c)``."""
        return bool(self.accessibility[agent_id, r, c])

    def location_resources(self, r: int, c: int) -> dict[str, float]:
        """``{resource: amount}`` of the collectible resources present at ``(r, c)``."""
        out, layers = {}, self._maps
        for k in self._collectible:
            v = layers[k][r, c]
            if v > 0:
                out[k] = v
        return out

    def location_landmarks(self, r: int, c: int) -> dict[str, float]:
        """``{landmark: value}`` of the landmarks present at ``(r, c)``."""
        out = {}
        for k in self._private:
            v = self._maps[k]["health"][r, c]
            if v > 0:
                out[k] = v
        for k in self._blocked + self._public:
            v = self._maps[k][r, c]
            if v > 0:
                out[k] = v
        return out

    def is_clear(self, r: int, c: int) -> bool:
        """Whether ``(r, c)`` holds neither a collectible resource nor a landmark (``not
        location_resources(r, c) and not location_landmarks(r, c)``, stopping at the first
        one found)."""
        layers = self._maps
        for k in self._collectible:
            if layers[k][r, c] > 0:
                return False
        for k in self._private:
            if layers[k]["health"][r, c] > 0:
                return False
        for names in (self._blocked, self._public):
            for k in names:
                if layers[k][r, c] > 0:
                    return False
        return True

    # ----------------------------------------------------------------- occupancy
    @property
    def unoccupied(self) -> np.ndarray:
        """Boolean (H, W): true where no agent stands."""
        return self._unoccupied

    def set_agent_loc(self, agent: BaseAgent, r: int, c: int) -> None:
        """Record that ``agent`` now occupies ``(r, c)`` (freeing its previous cell)."""
        if not (0 <= r < self.sz_h and 0 <= c < self.sz_w):
            raise ValueError(f"Location ({r}, {c}) is outside the {self.size} map")
        idx = agent.idx
        previous = self._agent_locs[idx]
        if previous is not None:
            self._unoccupied[previous] = True
        self._unoccupied[r, c] = False
        self._agent_locs[idx] = (r, c)

    def clear_agent_loc(self, agent: BaseAgent | None = None) -> None:
        """Free the cell of ``agent`` (or of every agent)."""
        if agent is None:
            self._unoccupied[:, :] = True
            self._agent_locs = [None] * self.n_agents
            return
        previous = self._agent_locs[agent.idx]
        if previous is not None:
            self._unoccupied[previous] = True
        self._agent_locs[agent.idx] = None

    # -------------------------------------------------------------- derived state
    @property
    def accessibility(self) -> np.ndarray:
        """Read-only bool (n_agents, H, W): product of all accessibility layers (cached)."""
        if self._accessibility is None:
            acc = np.ones((self.n_agents, *self.size), dtype=bool)
            for layer in self._accessibility_lookup.values():
                acc &= layer
            acc.flags.writeable = False
            self._accessibility = acc
        return self._accessibility

    @property
    def state(self) -> np.ndarray:
        """float32 (n_maps, H, W): every map (private landmarks: health) in insertion order."""
        layers = [self.get(k) for k in self._maps]
        if not layers:
            return np.zeros((0, *self.size), dtype=np.float32)
        return np.stack(layers).astype(np.float32)

    @property
    def owner_state(self) -> np.ndarray:
        """int16 (n_private, H, W): owner maps of the private landmarks."""
        if not self._private:
            return np.zeros((0, *self.size), dtype=np.int16)
        return np.stack([self._maps[k]["owner"] for k in self._private])

    @property
    def empty(self) -> np.ndarray:
        """Boolean (H, W): true where every map is zero."""
        return self.state.sum(axis=0) == 0

    @property
    def state_dict(self) -> dict[str, Any]:
        """Copies of every map, keyed by entity (private landmarks as owner/health dicts)."""
        return {
            k: {"owner": v["owner"].copy(), "health": v["health"].copy()}
            if isinstance(v, dict)
            else v.copy()
            for k, v in self._maps.items()
        }
