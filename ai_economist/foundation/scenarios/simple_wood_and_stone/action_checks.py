"""Reject actions that the last observation's action mask disallows (a mixin for scenarios).

Foundation 1.7.1 applied masked actions as no-ops (a build without stone did nothing, a move
into water stayed put). With ``check_action_masks=True`` (the default of the
gather-trade-build scenarios) ``env.step`` raises ``ValueError`` naming the agent, the
sub-space and the action instead, before anything changes. NO-OP is always allowed; collated
(``"a"``) actions are not checked.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class MaskedActionCheck:
    """Mixin for a :class:`BaseEnvironment` subclass with a ``check_action_masks`` attribute."""

    _last_masks: dict[str, Any] | None = None

    def _generate_observations(self) -> dict[str, Any]:
        obs = super()._generate_observations()  # type: ignore[misc]
        self._last_masks = {k: o["action_mask"] for k, o in obs.items() if "action_mask" in o}
        return obs

    def _check_actions(self, action_dictionary: Any) -> list[tuple[Any, Any]]:
        checked = super()._check_actions(action_dictionary)  # type: ignore[misc]
        masks = self._last_masks
        if getattr(self, "check_action_masks", False) and masks is not None:
            # checked holds one entry per action_dictionary entry, in its order
            for (key, value), (target, writes) in zip(action_dictionary.items(), checked):
                if target != "a" and writes and not self._allowed_flat(target, value, writes, key):
                    for sub, local in writes:
                        self._check_masked(target, sub, local)
        return checked

    def _allowed_flat(
        self, agent: Any, value: Any, writes: list[tuple[str, int]], key: Any = None
    ) -> bool:
        """Whether a flat (1-D) mask allows every write, read without the general lookups:
        a single-action int is its own mask index, a multi-action write its sub-space's
        block start plus the local action. False where it does not or the mask is not
        flat (the caller then checks each write, raising on a masked one). ``key``: the
        agent's key in the action dict (a str key is ``str(agent.idx)``)."""
        mask = self._last_masks.get(key if type(key) is str else str(agent.idx))
        if type(mask) is not np.ndarray or mask.ndim != 1:
            return False
        if not agent.multi_action_mode:
            return type(value) is int and mask[value] > 0
        offsets = self._mask_offsets(agent)
        for sub, local in writes:
            if local and (sub not in offsets or not mask[offsets[sub] + local] > 0):
                return False
        return True

    @staticmethod
    def _mask_offsets(agent: Any) -> dict[str, int]:
        """Where each sub-space's block starts in a multi-action agent's flat mask."""
        offsets = getattr(agent, "_gtb_mask_offsets", None)
        if offsets is None:
            offsets, offset = {}, 0
            for name in agent.action_names:
                offsets.setdefault(name, offset)
                offset += agent.action_dim[name]
            agent._gtb_mask_offsets = offsets
        return offsets

    def _mask_value(self, agent: Any, sub: str, local: int) -> float:
        mask = self._last_masks.get(str(agent.idx))
        if mask is None:
            return 1.0
        if isinstance(mask, dict):
            return float(np.asarray(mask[sub])[local - 1])
        if agent.multi_action_mode:
            offsets = self._mask_offsets(agent)
            if sub in offsets:
                return float(mask[offsets[sub] + local])
        inverse = getattr(agent, "_gtb_global_index", None)
        if inverse is None:
            inverse = {target: g for g, target in agent.single_action_map.items()}
            agent._gtb_global_index = inverse
        return float(mask[inverse[(sub, local)]])

    def _check_masked(self, agent: Any, sub: str, local: int) -> None:
        if local == 0 or self._mask_value(agent, sub, local) > 0:
            return
        raise ValueError(
            f"{self.name}: action {local} of sub-space {sub!r} for agent {agent.idx!r} is "
            "masked out by the last observation's action_mask (e.g. a move into water or an "
            "occupied cell, a build without wood and stone, a bid above the agent's coin); "
            "choose an action whose mask entry is 1, or pass check_action_masks=False to "
            "apply such actions as no-ops like Foundation 1.7.1"
        )
