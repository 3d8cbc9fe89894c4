"""Merge and flatten observations in one pass (uncollated envs with ``flatten_observations``).

:class:`~ai_economist.foundation.base.observations.ObservationMerger` builds each agent's
dict of prefixed fields and :class:`~ai_economist.foundation.base.observations.Packager`
then copies its flat fields into ``"flat"``. Once both have run on a step, the
:class:`FusedFlattener` learns where every ``(source, agent key, field)`` goes and afterwards
writes the sources' values straight into the ``"flat"`` vectors (or into the kept fields),
with the same result. Anything it has not seen (a new key or field, a missing field, a size
change, collated ``"a"`` sources) makes it return None, and the env takes the two-pass path,
which raises the usual errors or re-learns the layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.observations import (
    PUT_IN_BOTH,
    FlatSlot,
    ObservationMerger,
    PackagerCache,
    filled,
)

# A planned write: (start, stop, single) of a flat slot, or a kept field's name.
Slot = FlatSlot | str
# How assemble writes one field: (SINGLE, start, stop), (VECTOR, start, stop) or (KEPT, name, 0).
SINGLE, VECTOR, KEPT = 0, 1, 2
FieldPlan = tuple[int, Any, int]


def _field_plan(slot: Slot) -> FieldPlan:
    if type(slot) is str:
        return KEPT, slot, 0
    start, stop, single = slot
    return (SINGLE if single else VECTOR), start, stop


class FusedFlattener:
    """Learned one-pass merge + flatten (see the module docstring)."""

    def __init__(self, agent_keys: Sequence[str]) -> None:
        self._timed_keys = [*agent_keys, "p"]  # keys that carry "time"
        # Per source: (number of agent keys, {raw agent key: (key, {field: FieldPlan})}).
        self._plans: list[tuple[int, dict[Any, tuple[str, dict[str, FieldPlan]]]]] | None = None
        self._sizes: dict[str, int] = {}
        self._time_slots: dict[str, int | None] = {}

    def learn(
        self, sources: Sequence[tuple[str, Any]], packagers: PackagerCache, keys: Sequence[str]
    ) -> None:
        """Record the layout the two-pass path just used for ``sources`` (``keys``: the
        packaged observation keys)."""
        self._plans = None
        plans: list[tuple[int, dict[Any, tuple[str, dict[str, FieldPlan]]]]] = []
        slots_of: dict[str, dict[str, Slot]] = {}
        time_slots: dict[str, int | None] = {}
        sizes: dict[str, int] = {}
        for key in keys:
            packager = packagers.get(key)
            if packager is None or packager.n_agents is not None:
                return
            flat_slots = dict(packager._slots)
            time_slots[key] = flat_slots["time"][0] if "time" in flat_slots else None
            slots_of[key] = {**flat_slots, **{name: name for name in packager.keep_keys}}
            sizes[key] = packager._flat_size
        for prefix, source in sources:
            plan: dict[Any, tuple[str, dict[str, FieldPlan]]] = {}
            seen: set[str] = set()
            for raw_key, fields in source.items():
                key = str(raw_key)
                if key not in slots_of or key in seen:
                    return
                seen.add(key)
                field_plans: dict[str, FieldPlan] = {}
                for field in fields:
                    name = prefix + field
                    if name in PUT_IN_BOTH or name not in slots_of[key]:
                        return
                    field_plans[field] = _field_plan(slots_of[key][name])
                plan[raw_key] = (key, field_plans)
            plans.append((len(source), plan))
        if any(key not in sizes for key in self._timed_keys):
            return
        self._time_slots = {key: time_slots[key] for key in self._timed_keys}
        self._plans, self._sizes = plans, sizes

    def layout(
        self,
    ) -> tuple[list[dict[str, dict[str, FieldPlan]]] | None, dict[str, int], dict[str, Any]]:
        """The learned layout: per source ``{key: {field: FieldPlan}}`` (None before
        learning), each key's ``"flat"`` size and the ``time`` slot of the timed keys."""
        if self._plans is None:
            return None, {}, {}
        plans = [{key: fields for key, fields in plan.values()} for _, plan in self._plans]
        return plans, dict(self._sizes), dict(self._time_slots)

    def assemble(
        self, sources: Sequence[tuple[str, Any]], time_value: float
    ) -> dict[str, dict[str, Any]] | None:
        """``{key: packaged observation}`` for every key, or None (take the two-pass path).

        Every learned field of every learned key is written exactly once (the counts are
        checked and every name is looked up), so no slot keeps ``np.empty``'s garbage."""
        plans = self._plans
        if plans is None or len(plans) != len(sources):
            return None
        flats = {k: np.empty(n, dtype=np.float32) for k, n in self._sizes.items()}
        outs: dict[str, dict[str, Any]] = {k: {} for k in self._sizes}
        for key, slot in self._time_slots.items():
            outs[key]["time"] = filled(1, time_value)
            if slot is not None:
                flats[key][slot] = time_value
        ndarray, ndim = np.ndarray, np.ndim
        try:
            for (n_keys, plan), (_, source) in zip(plans, sources):
                if len(source) != n_keys:
                    return None
                for raw_key, fields in source.items():
                    key, field_plans = plan[raw_key]
                    if len(fields) != len(field_plans):
                        return None
                    flat, out = flats[key], outs[key]
                    for field, value in fields.items():
                        kind, start, stop = field_plans[field]
                        if kind == SINGLE:
                            if type(value) is float:
                                flat[start] = value
                            else:
                                flat[start:stop] = value
                        elif kind == VECTOR:
                            if (type(value) is ndarray and value.ndim == 1) or ndim(value) == 1:
                                flat[start:stop] = value
                            else:
                                return None  # a scalar would broadcast over the slice
                        else:
                            out[start] = value
        except (KeyError, ValueError, TypeError):
            return None
        for key, out in outs.items():
            out["flat"] = flats[key]
        return outs


def merge_and_flatten(
    sources: Sequence[tuple[str, Any]],
    time_value: float,
    merger: ObservationMerger,
    packagers: PackagerCache | None,
    fused: FusedFlattener | None,
    obs_keys: Sequence[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(obs, agent-wise planner obs)`` from the observation sources: one pass through
    ``fused`` when it knows the layout, else ``merger`` then ``packagers`` (None: no
    flattening), after which ``fused`` learns the layout."""
    packaged = fused.assemble(sources, time_value) if fused is not None else None
    if packaged is not None:
        obs = {k: packaged[k] for k in obs_keys}
        planner_obs = {k: o for k, o in packaged.items() if k not in obs}
    else:
        obs, planner_obs = merger.merge(sources, time_value)
        if packagers is None:
            return obs, planner_obs
        obs = {k: packagers.package(k, o) for k, o in obs.items()}
        planner_obs = {k: packagers.package(k, o) for k, o in planner_obs.items()}
        if fused is not None:
            fused.learn(sources, packagers, [*obs, *planner_obs])
    return obs, {k: o["flat"] if len(o) == 1 else o for k, o in planner_obs.items()}


class FlatMaskWriter:
    """Flattened action masks written straight into each agent's logits layout.

    The same vectors as ``collect_masks`` followed by ``BaseAgent.flatten_masks`` (float32,
    ones at the NO-OP positions); anything unexpected (an ``"a"`` entry, an unknown agent or
    sub-space, a missing one, a wrong size) returns None and the caller takes that path.
    """

    def __init__(self, agent_lookup: dict[str, Any]) -> None:
        self._agents = dict(agent_lookup)
        self._templates: dict[str, np.ndarray] = {}
        # {agent key: {component: {sub-space or None: (start, stop)}}}
        self._slots: dict[str, dict[str, dict[str | None, tuple[int, int]]]] = {}
        self._n_writes = 0
        for key, agent in self._agents.items():
            if agent._passive_multi_action_agent:
                self._templates[key] = np.ones(1, dtype=np.float32)
                self._slots[key] = {}
                continue
            slots, start, ones, n_subspaces = {}, 0 if agent.multi_action_mode else 1, [], 0
            if not agent.multi_action_mode:
                ones.append(0)
            for name, n in zip(agent.action_names, agent.subspace_sizes):
                if agent.multi_action_mode:
                    ones.append(start)
                    start += 1
                component, _, sub = name.partition(".")
                slots.setdefault(component, {})[sub or None] = (start, start + n)
                start += n
                n_subspaces += 1
            template = np.zeros(start, dtype=np.float32)
            template[ones] = 1
            self._templates[key], self._slots[key] = template, slots
            self._n_writes += n_subspaces

    def build(self, components: Sequence[Any], completions: int) -> dict[str, np.ndarray] | None:
        """``{agent key: flattened mask}``, or None (take the general path)."""
        out = {k: t.copy() for k, t in self._templates.items()}
        n_writes = 0
        try:
            for component in components:
                name = component.name
                for idx, mask in component.generate_masks(completions=completions).items():
                    key = idx if type(idx) is str else str(idx)
                    agent_slots, flat = self._slots[key], out[key]
                    if not agent_slots:
                        continue  # a passive agent's mask is always [1]
                    slots = agent_slots[name]
                    if type(mask) is dict:
                        for sub, sub_mask in mask.items():
                            start, stop = slots[sub]
                            flat[start:stop] = sub_mask
                            n_writes += 1
                    else:
                        start, stop = slots[None]
                        flat[start:stop] = mask
                        n_writes += 1
        except (KeyError, ValueError, TypeError):
            return None
        return out if n_writes == self._n_writes else None
