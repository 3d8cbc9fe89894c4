"""Observation assembly: merging scenario/component outputs, flattening and collation.

Observation sources (the scenario's and each component's ``generate_observations()``) return
``{agent_key: {field: value}}``. Agent keys are ``"0".."n-1"`` for mobile agents, ``"p"`` for
the planner, ``"p<i>"`` for agent-wise planner observations, and ``"a"`` for collated
mobile-agent observations whose arrays have the agents on their **last** axis.

* Uncollated mode: an ``"a"`` entry is split into per-agent slices (``value[..., i]``).
* Collated mode: ``"a"`` entries pass through untouched; per-agent entries are stacked with
  ``np.stack(..., axis=-1)``.

Flattening concatenates (in sorted key order, as float32) the scalar and 1-D fields of an
agent's observation into ``"flat"``; multi-dimensional fields are kept as they are, and
``time`` is kept *and* flattened. In collated mode the same rule applies per agent: fields of
per-agent rank <= 1 form ``"flat"`` of shape ``(obs_dim, n_agents)`` (1.7.1 concatenated
across the agent axis instead).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

PUT_IN_BOTH = ("time",)
FlatSlot = tuple[int, int, bool]
"""Where a field goes in ``"flat"``: ``(start, stop, single)``, ``single`` for one value."""


def filled(n: int, value: float) -> np.ndarray:
    """A new float64 array of ``n`` copies of ``value`` (as ``np.full(n, value)``, cheaper)."""
    out = np.empty(n)
    out.fill(value)
    return out


def is_agentwise_planner_key(key: str, n_agents: int) -> bool:
    """Whether ``key`` is ``"p<i>"`` for a mobile agent index ``i``."""
    return len(key) > 1 and key[0] == "p" and key[1:].isdigit() and int(key[1:]) < n_agents


def _slice_agent(value: Any, i: int) -> Any:
    arr = np.asarray(value)
    return value if arr.ndim == 0 else arr[..., i]


class ObservationMerger:
    """Merges observation sources into per-agent (or collated) dicts.

    Args:
        n_agents: number of mobile agents.
        collate: produce ``{"a", "p"}`` instead of one entry per agent.
    """

    def __init__(self, n_agents: int, collate: bool) -> None:
        self.n_agents = n_agents
        self.collate = collate
        self.agent_keys = [str(i) for i in range(n_agents)]
        self._agent_key_set = set(self.agent_keys)
        self._planner_keys = {f"p{i}" for i in range(n_agents)}

    def merge(
        self, sources: Iterable[tuple[str, Mapping[Any, Mapping[str, Any]]]], time_value: float
    ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
        """Return ``(obs, agent_wise_planner_obs)`` with prefixed field names and ``time``."""
        if self.collate:
            obs = {
                "a": {"time": filled(self.n_agents, time_value)},
                "p": {"time": filled(1, time_value)},
            }
        else:
            obs = {k: {"time": filled(1, time_value)} for k in self.agent_keys}
            obs["p"] = {"time": filled(1, time_value)}
        planner_obs: dict[str, dict[str, Any]] = {}
        per_agent: dict[str, list[Any]] = {}
        for prefix, source in sources:
            for raw_key, fields in source.items():
                key = raw_key if type(raw_key) is str else str(raw_key)
                target = obs.get(key)
                if target is None and key in self._planner_keys:  # "p<i>"
                    target = planner_obs.get(key)
                    if target is None:
                        target = planner_obs[key] = {}
                if target is not None:  # fast path: "a"/"p" in collated mode, any agent else
                    for f, v in fields.items():
                        target[prefix + f] = v
                    continue
                prefixed = {prefix + f: v for f, v in fields.items()}
                self._route(key, prefixed, obs, planner_obs, per_agent, prefix)
        if per_agent:
            obs["a"].update(self._stack(per_agent))
        return obs, planner_obs

    def _route(
        self,
        key: str,
        prefixed: dict[str, Any],
        obs: dict[str, dict[str, Any]],
        planner_obs: dict[str, dict[str, Any]],
        per_agent: dict[str, list[Any]],
        prefix: str,
    ) -> None:
        if key in obs:
            obs[key].update(prefixed)
        elif self.collate and key in self._agent_key_set:
            i = int(key)
            for field, value in prefixed.items():
                per_agent.setdefault(field, [None] * self.n_agents)[i] = value
        elif key == "a":
            for i, agent_key in enumerate(self.agent_keys):
                obs[agent_key].update({f: _slice_agent(v, i) for f, v in prefixed.items()})
        elif is_agentwise_planner_key(key, self.n_agents):
            planner_obs.setdefault(key, {}).update(prefixed)
        else:
            raise KeyError(
                f"Observations from {prefix.rstrip('-')!r} use an unknown agent key {key!r}; "
                f"expected '0'..'{self.n_agents - 1}', 'p', 'p<i>' or 'a'"
            )

    def _stack(self, per_agent: dict[str, list[Any]]) -> dict[str, np.ndarray]:
        stacked = {}
        for field, values in per_agent.items():
            missing = [i for i, v in enumerate(values) if v is None]
            if missing:
                raise KeyError(f"Observation {field!r} is missing for agents {missing}")
            stacked[field] = np.stack([np.asarray(v) for v in values], axis=-1)
        return stacked


class Packager:
    """Flattens one agent's observation dict; the layout is fixed by the first dict seen.

    Args:
        example: an observation dict (without ``action_mask``).
        n_agents: ``None`` for an individual agent; the agent count for a collated ``"a"`` dict.
    """

    def __init__(self, example: Mapping[str, Any], n_agents: int | None = None) -> None:
        self.n_agents = n_agents
        self.flat_keys: list[str] = []
        self.keep_keys: list[str] = []
        self.scalar_keys: set[str] = set()
        for key in sorted(example):
            arr = np.asarray(example[key])
            if arr.ndim == 0:
                self.scalar_keys.add(key)
            if self._is_flat(key, arr):
                self.flat_keys.append(key)
                if key in PUT_IN_BOTH:
                    self.keep_keys.append(key)
            else:
                self.keep_keys.append(key)
        self._n_fields = len(example)
        # Individual agents: each flat field's slice of "flat" (sizes from the example).
        self._slots: list[tuple[str, FlatSlot]] = []
        start = 0
        if n_agents is None:
            for key in self.flat_keys:
                size = int(np.asarray(example[key]).size)
                self._slots.append((key, (start, start + size, size == 1)))
                start += size
        self._flat_size = start

    def _is_flat(self, key: str, arr: np.ndarray) -> bool:
        if self.n_agents is None:
            return arr.ndim <= 1
        if arr.ndim == 0:
            return True
        if arr.shape[-1] != self.n_agents:
            raise ValueError(
                f"Collated observation {key!r} has shape {arr.shape}; its last axis must be "
                f"the {self.n_agents} agents"
            )
        return arr.ndim <= 2

    def _part(self, key: str, value: Any) -> np.ndarray:
        if self.n_agents is None:
            return np.asarray(value, dtype=np.float32).reshape(-1)
        if key in self.scalar_keys:
            return np.full((1, self.n_agents), value, dtype=np.float32)
        return np.asarray(value, dtype=np.float32).reshape(-1, self.n_agents)

    def __call__(self, o: Mapping[str, Any]) -> dict[str, Any]:
        if len(o) != self._n_fields:
            raise ValueError(
                f"Observation fields changed after the first step: expected "
                f"{sorted(self.flat_keys + self.keep_keys)}, got {sorted(o)}"
            )
        out = {k: o[k] for k in self.keep_keys}
        if self.n_agents is None:
            out["flat"] = self._fill_flat(o)
            return out
        try:
            parts = [self._part(k, o[k]) for k in self.flat_keys]
        except KeyError as err:
            raise ValueError(f"Observation field {err} disappeared after the first step") from None
        if not parts:
            shape = (0,) if self.n_agents is None else (0, self.n_agents)
            out["flat"] = np.zeros(shape, dtype=np.float32)
        else:
            out["flat"] = np.concatenate(parts, axis=0)
        return out

    def _fill_flat(self, o: Mapping[str, Any]) -> np.ndarray:
        """One agent's ``flat``: each field written into its slice (float32, same values as
        concatenating the float32-cast fields)."""
        flat = np.empty(self._flat_size, dtype=np.float32)
        key, slot = "", (0, 0, False)
        try:
            for key, slot in self._slots:
                if not write_slot(flat, slot, o[key]):
                    raise ValueError(key)
        except KeyError as err:
            raise ValueError(f"Observation field {err} disappeared after the first step") from None
        except ValueError:
            raise ValueError(
                f"Observation field {key!r} changed size after the first step: expected "
                f"{slot[1] - slot[0]} values, got shape {np.shape(o[key])}"
            ) from None
        return flat


def write_slot(flat: np.ndarray, slot: FlatSlot, value: Any) -> bool:
    """Write one field's ``value`` into its ``slot`` ``(start, stop, single)`` of ``flat``
    (``single``: a one-value slot); False, writing nothing, where a vector slot gets no 1-d
    value (a scalar would broadcast over the slice)."""
    start, stop, single = slot
    kind = type(value)
    if single:
        if kind is float or kind is int:
            flat[start] = value
        else:
            flat[start:stop] = value
    elif (kind is np.ndarray and value.ndim == 1) or np.ndim(value) == 1:
        flat[start:stop] = value
    else:
        return False
    return True


class PackagerCache:
    """One :class:`Packager` per observation key, built on first use."""

    def __init__(self, n_agents: int, collate: bool) -> None:
        self.n_agents = n_agents
        self.collate = collate
        self._packagers: dict[str, Packager] = {}

    def package(self, key: str, o: Mapping[str, Any]) -> dict[str, Any]:
        """Flatten ``o`` (the observation of ``key``)."""
        packager = self._packagers.get(key)
        if packager is None:
            n = self.n_agents if (self.collate and key == "a") else None
            packager = self._packagers[key] = Packager(o, n)
        return packager(o)

    def get(self, key: str) -> Packager | None:
        """The packager of ``key``, if one has been built."""
        return self._packagers.get(key)

    def clear(self) -> None:
        """Forget every layout."""
        self._packagers.clear()
