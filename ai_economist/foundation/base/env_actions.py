"""Action parsing of :class:`~ai_economist.foundation.base.base_env.BaseEnvironment`.

``parse_actions`` and the two halves ``step`` uses: check every action first (nothing written),
then write them into the agents' action dicts (or the collated layout), and put every action
back to NO-OP after the step. A mixin over the attributes that ``BaseEnvironment.__init__`` sets
(``world``, ``_collated_layout``) and ``get_agent`` of ``EnvironmentViews``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_economist.foundation.base.collation import CollatedLayout


class EnvironmentActions:
    """Mixin: check, apply and reset the actions of a Foundation environment's agents."""

    def parse_actions(self, action_dictionary: Mapping[Any, Any]) -> None:
        """Set agent actions from ``{agent_idx: action}`` (``"a"``: collated int array)."""
        self._parse_actions(action_dictionary, True)

    def _parse_actions(self, action_dictionary: Mapping[Any, Any], write_collated: bool) -> bool:
        """``parse_actions``; with ``write_collated=False`` a collated ``"a"`` entry may be kept
        only as ``CollatedLayout.parsed`` (see ``_collated_actions_to_agent_dicts``).

        Returns whether the mobile agents' action dicts hold this call's actions.
        """
        return self._apply_actions(self._check_actions(action_dictionary), write_collated)

    def _check_actions(self, action_dictionary: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
        """Every entry of ``action_dictionary`` validated, nothing written yet: a collated
        ``("a", int64 array)`` and ``(agent, [(sub_space, local_action), ...])`` pairs."""
        if not isinstance(action_dictionary, dict):
            raise TypeError(
                f"actions must be a dict keyed by agent idx, got {type(action_dictionary).__name__}"
            )
        checked: list[tuple[Any, Any]] = []
        lookup = self._agent_lookup  # get_agent's table, read directly for str keys
        for key, value in action_dictionary.items():
            if key == "a":
                if self._collated_layout is None:
                    self._collated_layout = CollatedLayout(self.world.agents)
                checked.append(("a", self._collated_layout.check_actions(value)))
            else:
                agent = lookup.get(key) if type(key) is str else None
                if agent is None:
                    agent = self.get_agent(key)
                checked.append((agent, agent.resolve_actions(value)))
        return checked

    def _apply_actions(self, checked: list[tuple[Any, Any]], write_collated: bool) -> bool:
        """Write what :meth:`_check_actions` returned (in order: a mobile agent's own entry
        may override its ``"a"`` action)."""
        layout = self._collated_layout
        if layout is not None:
            layout.parsed = None
        per_agent_keys = False  # a mobile agent's own entry (not "a", not the planner)
        for target, _ in checked:
            if target != "a" and target.idx != "p":
                per_agent_keys = True
                break
        written = True
        for target, value in checked:
            if target == "a":
                written = layout.apply_actions(value, write_collated or per_agent_keys)
            else:
                for name, local in value:
                    target.action[name] = local
        if per_agent_keys and layout is not None:
            layout.parsed = None  # a mobile agent's own entry may override its "a" action
        return written

    def _collated_actions_to_agent_dicts(self) -> bool:
        """Whether ``step`` must write collated actions into the mobile agents' dicts.

        True here; a scenario whose components read the mobile agents' actions only through
        ``BaseComponent.get_agent_actions`` may return False (the dicts then stay NO-OP
        during the step, except in dense-logged episodes, which record them).
        """
        return True

    def _reset_all_actions(self, mobile_agents: bool = True) -> None:
        """Every action back to NO-OP (the mobile agents' only if ``mobile_agents``: they
        were not written to this step)."""
        self.world.step_collated_actions = None
        if not mobile_agents:
            pass
        elif self._collated_layout is not None:
            self._collated_layout.reset_actions()
        else:
            for agent in self.world.agents:
                agent.action.update(agent._noop_action_dict)
        planner = self.world.planner
        planner.action.update(planner._noop_action_dict)
