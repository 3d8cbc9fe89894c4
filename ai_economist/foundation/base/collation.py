"""Action parsing, mask assembly and reward handling, per agent or collated.

Collated mode keys all mobile agents under ``"a"`` with the agents on the **last** axis:

* actions ``{"a": int array (n_agents,)}`` (multi-action mode: ``(n_subspaces, n_agents)``);
* masks per sub-space ``(n, n_agents)``; flattened (single-action mode) to
  ``(1 + sum(n), n_agents)`` with a ones NO-OP row first, multi-action mode
  ``(sum(n + 1), n_agents)``;
* rewards ``rew["a"]`` float array ``(n_agents,)``, ``rew["p"]`` float.

The layout tables are built once from agent 0 (all mobile agents share one action space).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_agent import BaseAgent
from ai_economist.foundation.base.direct_masks import DirectMasks


def collect_masks(components: Sequence[Any], completions: int) -> dict[str, dict[str, Any]]:
    """``{agent_key: {sub_space: mask}}`` from every component's ``generate_masks``."""
    masks: dict[str, dict[str, Any]] = {}
    for component in components:
        for idx, mask in component.generate_masks(completions=completions).items():
            target = masks.setdefault(str(idx), {})
            if isinstance(mask, dict):
                for sub, sub_mask in mask.items():
                    target[f"{component.name}.{sub}"] = sub_mask
            else:
                target[component.name] = mask
    return masks


def as_integer_actions(what: str, actions: Any) -> np.ndarray:
    """``actions`` as an int64 array: integer arrays as they are, float arrays only when every
    value is a finite integer (``2.0``); anything else is a TypeError naming ``what``.

    The dict API (``env.step``) and ``FoundationEnvWrapper.step_all_envs`` both use it, so
    they accept and reject the same arrays.
    """
    arr = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
    if arr.dtype.kind in "iu":
        return arr if arr.dtype == np.int64 else arr.astype(np.int64)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    raise TypeError(
        f"{what} must be integers (or floats holding integers), got dtype {arr.dtype}"
        + (f" with values {arr.reshape(-1)[:6].tolist()}" if arr.dtype.kind == "f" else "")
    )


class CollatedLayout:
    """Action/mask layout shared by the mobile agents, for the collated fast path."""

    def __init__(self, agents: Sequence[BaseAgent]) -> None:
        first = agents[0]
        for agent in agents[1:]:
            if (
                agent.action_names != first.action_names
                or agent.subspace_sizes != first.subspace_sizes
            ):
                raise ValueError("Collated mode needs every mobile agent to share one action space")
        self.agents = list(agents)
        self.n_agents = len(agents)
        self.multi = first.multi_action_mode
        self.passive = first._passive_multi_action_agent
        self.names = first.action_names
        self.sizes = first.subspace_sizes
        self.single_map = dict(first.single_action_map)
        # (sub-space, local action) of each global action index (None for the NO-OP 0)
        self._single_targets = [None] + [self.single_map[g] for g in sorted(self.single_map)]
        if sorted(self.single_map) != list(range(1, len(self._single_targets))):
            self._single_targets = None  # not 1..n: use the dict
        # One sub-space whose local action is the global index: actions map to it directly.
        self._identity_name = None
        if self._single_targets is not None and len(self.names) == 1:
            name = self.names[0]
            if all(
                self._single_targets[g] == (name, g) for g in range(1, len(self._single_targets))
            ):
                self._identity_name = name
        self._ones_row = np.ones((1, self.n_agents), dtype=np.float32)
        # ``{sub_space: int64 (n_agents,)}`` of the last parse_actions when it can be read
        # without the agents' dicts (one sub-space, actions = local actions), else None.
        self.parsed: dict[str, np.ndarray] | None = None

    # ---------------------------------------------------------------- actions
    def parse_actions(self, actions: Any, write_dicts: bool = True) -> bool:
        """Set every mobile agent's action from a collated ``"a"`` array.

        The whole array is checked (dtype, shape, range) before any agent's action is
        written, so a rejected array changes nothing.  With ``write_dicts=False`` the agents'
        dicts are left alone when ``parsed`` can hold the actions instead.  Returns whether
        the agents' dicts were written.
        """
        return self.apply_actions(self.check_actions(actions), write_dicts)

    def check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as a validated int64 array (TypeError/ValueError naming what is wrong)."""
        arr = as_integer_actions("Collated actions", actions)
        if self.multi:
            n_sub = len(self.names)
            if arr.ndim == 1 and n_sub == 1:
                arr = arr[None]
            if arr.shape != (n_sub, self.n_agents):
                raise ValueError(
                    f"Collated multi-mode actions must have shape ({n_sub}, {self.n_agents}), "
                    f"got {arr.shape}"
                )
            for name, n, row in zip(self.names, self.sizes, arr, strict=True):
                if row.size and (row.min() < 0 or row.max() > n):
                    raise ValueError(
                        f"Collated actions for {name!r} must be in 0..{n}, got {row.tolist()}"
                    )
            return arr
        if arr.shape != (self.n_agents,):
            raise ValueError(
                f"Collated actions must have shape ({self.n_agents},), got {arr.shape}"
            )
        if arr.size and (arr.min() < 0 or arr.max() > len(self.single_map)):
            bad = int(np.flatnonzero((arr < 0) | (arr > len(self.single_map)))[0])
            raise ValueError(
                f"Collated action {int(arr[bad])} of agent {self.agents[bad].idx} is out of "
                f"range: expected 0..{len(self.single_map)}"
            )
        return arr

    def apply_actions(self, arr: np.ndarray, write_dicts: bool = True) -> bool:
        """Write an array that :meth:`check_actions` returned; see :meth:`parse_actions`."""
        self.parsed = None
        if self.multi:
            for name, row in zip(self.names, arr, strict=True):
                for agent, value in zip(self.agents, row.tolist(), strict=True):
                    agent.action[name] = value
            return True
        values = arr.tolist()
        if self._identity_name is not None:
            name = self._identity_name
            if write_dicts:
                for agent, action in zip(self.agents, values):
                    if action:
                        agent.action[name] = action
            # read-only use (get_agent_actions copies); the caller's int64 array is kept
            self.parsed = {name: arr}
            return write_dicts
        single_map = self.single_map
        for agent, action in zip(self.agents, values, strict=True):
            if action:
                name, local = single_map[action]
                agent.action[name] = local
        return True

    def reset_actions(self) -> None:
        """Set every mobile agent's actions to NO-OP."""
        agents = self.agents
        for name in self.names:
            for agent in agents:
                agent.action[name] = 0

    # ------------------------------------------------------------------ masks
    def stack_masks(self, masks: dict[str, dict[str, Any]]) -> dict[str, np.ndarray]:
        """Collated ``{sub_space: (n, n_agents)}`` masks from ``"a"`` and per-agent entries."""
        out: dict[str, np.ndarray] = {}
        collated = masks.get("a", {})
        for name, n in zip(self.names, self.sizes, strict=True):
            if name in collated:
                out[name] = self._check(name, n, collated[name])
                continue
            try:
                rows = [masks[str(i)][name] for i in range(self.n_agents)]
            except KeyError:
                raise KeyError(
                    f"No action mask for sub-space {name!r} of every mobile agent"
                ) from None
            out[name] = self._check(name, n, np.stack([np.asarray(r) for r in rows], axis=-1))
        return out

    def _check(self, name: str, n: int, mask: Any) -> np.ndarray:
        arr = np.asarray(mask)
        if arr.shape == (self.n_agents,) and n == 1:
            arr = arr[None]
        if arr.shape != (n, self.n_agents):
            raise ValueError(
                f"Collated mask for {name!r} must have shape ({n}, {self.n_agents}), got {arr.shape}"
            )
        return arr

    def flatten_masks(self, stacked: dict[str, np.ndarray]) -> np.ndarray:
        """float32 ``(n_logits, n_agents)`` mask laid out like the logits."""
        if self.passive:
            return np.ones((1, self.n_agents), dtype=np.float32)
        if not self.multi and len(self.names) == 1:  # one sub-space: [ones row; mask]
            mask = stacked[self.names[0]]
            out = np.empty((1 + self.sizes[0], self.n_agents), dtype=np.float32)
            out[0] = 1.0
            np.copyto(out[1:], mask, casting="same_kind")
            return out
        parts: list[np.ndarray] = [] if self.multi else [self._ones_row]
        for name in self.names:
            if self.multi:
                parts.append(self._ones_row)
            parts.append(stacked[name])
        return np.concatenate(parts, axis=0, dtype=np.float32)


def split_collated_masks(masks: dict[str, dict[str, Any]], n_agents: int) -> None:
    """In place: turn an ``"a"`` mask entry into per-agent entries (uncollated mode)."""
    collated = masks.pop("a", None)
    if not collated:
        return
    for i in range(n_agents):
        target = masks.setdefault(str(i), {})
        for name, mask in collated.items():
            target[name] = np.asarray(mask)[..., i]


def collate_rewards(rew: Mapping[str, Any], n_agents: int) -> dict[str, Any]:
    """``{"a": float array (n_agents,), "p": float}`` from collated or per-agent rewards."""
    if "a" in rew:
        arr = np.asarray(rew["a"])
        if arr.shape != (n_agents,):
            raise ValueError(f"rew['a'] must have shape ({n_agents},), got {arr.shape}")
        if arr.dtype.kind != "f":
            arr = arr.astype(np.float64)
    else:
        try:
            arr = np.array([rew[str(i)] for i in range(n_agents)], dtype=np.float64)
        except KeyError as err:
            raise KeyError(f"compute_reward returned no reward for agent {err}") from None
    p = rew["p"]
    if not isinstance(p, float):
        p = float(np.asarray(p).reshape(-1)[0])
    return {"a": arr, "p": p}


def split_rewards(rew: Mapping[str, Any], n_agents: int) -> dict[str, Any]:
    """Per-agent ``{"0": r0, ..., "p": rp}`` from collated or per-agent rewards."""
    out = {k: v for k, v in rew.items() if k != "a"}
    if "a" in rew:
        values = np.asarray(rew["a"]).reshape(-1).tolist()
        if len(values) != n_agents:
            raise ValueError(f"rew['a'] must have {n_agents} entries, got {len(values)}")
        out.update({str(i): v for i, v in enumerate(values)})
    return out


def _as_uint8(masks: Mapping[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=np.uint8) for k, v in masks.items()}


class MaskBuilder:
    """Builds the ``action_mask`` entries of the observations.

    Args:
        agent_lookup: ``{str(idx): agent}`` for the mobile agents and the planner ``"p"``.
        flatten: one float32 vector (collated: matrix) per key, else ``{sub_space: uint8 mask}``.
        layout: the collated layout (collated mode), else None.
    """

    def __init__(
        self, agent_lookup: Mapping[str, BaseAgent], flatten: bool, layout: CollatedLayout | None
    ) -> None:
        self.agent_lookup = dict(agent_lookup)
        self.n_agents = len(self.agent_lookup) - 1
        self.flatten = flatten
        self.layout = layout
        self._valid_keys = set(self.agent_lookup) | {"a"}
        self._writer = None
        # Components' mask writers (None: not tried yet, False: not all offer one).
        self._direct: DirectMasks | None | bool = None
        if flatten and layout is None:
            from ai_economist.foundation.base.flat_assembly import FlatMaskWriter

            self._writer = FlatMaskWriter(self.agent_lookup)

    def build(self, components: Sequence[Any], completions: int) -> dict[str, Any]:
        """Masks keyed like the observations."""
        if self._direct is None and self._writer is not None:
            writer = self._writer
            direct = DirectMasks.build(writer._templates, writer._slots, components)
            self._direct = direct or False
        direct_masks = self._direct.build_masks(completions) if self._direct else None
        if direct_masks is not None:
            return direct_masks
        if self._writer is not None:
            written = self._writer.build(components, completions)
            if written is not None:
                return written
        masks = collect_masks(components, completions)
        unknown = masks.keys() - self._valid_keys
        if unknown:
            raise KeyError(f"Action masks for unknown agents {sorted(unknown)}")
        if self.layout is not None:
            return self._build_collated(masks)
        split_collated_masks(masks, self.n_agents)
        if self.flatten:
            return {k: a.flatten_masks(masks.get(k, {})) for k, a in self.agent_lookup.items()}
        return {k: _as_uint8(masks.get(k, {})) for k in self.agent_lookup}

    def _build_collated(self, masks: dict[str, dict[str, Any]]) -> dict[str, Any]:
        stacked = self.layout.stack_masks(masks)
        p_masks = masks.get("p", {})
        if self.flatten:
            planner = self.agent_lookup["p"]
            return {"a": self.layout.flatten_masks(stacked), "p": planner.flatten_masks(p_masks)}
        return {"a": _as_uint8(stacked), "p": _as_uint8(p_masks)}
