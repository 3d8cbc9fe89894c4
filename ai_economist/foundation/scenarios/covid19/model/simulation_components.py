"""The component steps of ``CovidSimulation`` (open/close, subsidy, vaccination).

``ComponentSteps`` is a mixin of :class:`~.simulation.CovidSimulation`: each method mirrors one
Foundation component's ``component_step`` and, like the rest of the simulator, works on all
``num_envs`` environments at once (with shortcuts for one env that give the same values).
"""

from __future__ import annotations

import numpy as np

from ai_economist.foundation.scenarios.covid19.model import dynamics


class ComponentSteps:
    """Component steps of the batched simulator (a mixin of ``CovidSimulation``)."""

    def step_open_close(self, agent_actions: np.ndarray, action_cooldown_period: int) -> None:
        """``ControlUSStateOpenCloseStatus``: set each state's stringency level for this step."""
        p, t = self.params, self._clock()
        if self.use_real_world_policies:  # the original applies the real policy one day late
            level = p.real_policy_row(p.start_date_index + t - 1)
            self.stringency_level = np.broadcast_to(level, self.stringency_level.shape).copy()
            return
        if self.num_envs == 1:
            agent_actions = _one_env(agent_actions, p.num_agents)
        self.stringency_level, self.cooldown_until = dynamics.open_close_step(
            agent_actions,
            self.stringency_level,
            self.cooldown_until,
            t,
            action_cooldown_period,
            p.num_stringency_levels,
        )

    def step_subsidy(
        self,
        planner_actions: np.ndarray,
        subsidy_interval: int,
        num_subsidy_levels: int,
        max_daily_subsidy_per_state: np.ndarray,
    ) -> None:
        """``FederalGovernmentSubsidy``: the planner's level and each state's subsidy today."""
        if self.use_real_world_policies:
            self.subsidy_level = self.real_subsidy_levels[self.timestep]
        else:
            self.subsidy_level = dynamics.subsidy_step(
                planner_actions, self.subsidy_level, self._clock(), subsidy_interval
            )
        if self.num_envs == 1:
            # The amounts depend on the level only: with read-only constants (as the
            # Foundation component passes), the previous read-only array is reused while
            # the level stays the same (it changes at most once per subsidy interval).
            level, cached = int(self.subsidy_level[0]), self._subsidy_cache
            if (
                cached is not None
                and cached[0] == level
                and cached[1] == num_subsidy_levels
                and cached[2] is max_daily_subsidy_per_state
                and self.subsidy is cached[3]
            ):
                return
            self.subsidy = dynamics.subsidy_amounts(
                self.subsidy_level.reshape(()),
                num_subsidy_levels,
                _as_row(max_daily_subsidy_per_state),
            )
            self._subsidy_cache = None
            if _is_constant_row(max_daily_subsidy_per_state, self.params.num_agents):
                self.subsidy.flags.writeable = False
                self._subsidy_cache = (
                    level,
                    num_subsidy_levels,
                    max_daily_subsidy_per_state,
                    self.subsidy,
                )
        else:
            self.subsidy = dynamics.subsidy_amounts(
                self.subsidy_level, num_subsidy_levels, max_daily_subsidy_per_state
            )

    def step_vaccination(
        self,
        first_delivery_step: int,
        delivery_interval: int,
        num_vaccines_per_delivery: np.ndarray,
    ) -> None:
        """``VaccinationCampaign``: deliver today's vaccines into ``vaccines_available``."""
        t = self._clock()
        if self.num_envs == 1:
            delivered = self._delivery_table(
                t, first_delivery_step, delivery_interval, num_vaccines_per_delivery
            )
            if delivered is not None:
                self.vaccines_available = self.vaccines_available + delivered
                return
            num_vaccines_per_delivery = _as_row(num_vaccines_per_delivery)
        self.vaccines_available = self.vaccines_available + dynamics.vaccination_step(
            t, first_delivery_step, delivery_interval, num_vaccines_per_delivery
        )

    def _delivery_table(
        self, t, first_delivery_step: int, delivery_interval: int, per_delivery: np.ndarray
    ) -> np.ndarray | None:
        """``vaccination_step`` of step ``t`` (1, A) from a table of every step of the episode,
        evaluated at once; only for constant deliveries (a read-only (A,) array owning its
        data, as the Foundation component passes), else None."""
        steps = self.params.episode_length + 1
        if (
            not isinstance(t, int)
            or not 0 <= t < steps
            or not _is_constant_row(per_delivery, self.params.num_agents)
        ):
            return None
        cached = self._delivery_cache
        if (
            cached is None
            or cached[0] != (first_delivery_step, delivery_interval)
            or cached[1] is not per_delivery
        ):
            table = dynamics.vaccination_step(
                np.arange(steps)[:, None], first_delivery_step, delivery_interval, per_delivery
            )  # (steps, 1, A)
            cached = (first_delivery_step, delivery_interval), per_delivery, table
            self._delivery_cache = cached
        return cached[2][t]

    def step_components(self, agent_actions: np.ndarray, planner_actions: np.ndarray) -> None:
        """The three components in the order of the published configuration."""
        c = self.components
        self.step_open_close(agent_actions, c.action_cooldown_period)
        self.step_subsidy(
            planner_actions, c.subsidy_interval, c.num_subsidy_levels, c.max_daily_subsidy_per_state
        )
        self.step_vaccination(
            c.first_delivery_step, c.delivery_interval, c.num_vaccines_per_delivery
        )


def _one_env(values, size: int) -> np.ndarray:
    """One env's (1, size) values from a (1, size) or (size,) array (or a broadcastable value)."""
    values = np.asarray(values)
    if values.shape == (1, size):
        return values
    if values.shape == (size,):
        return values.reshape(1, size)
    return np.broadcast_to(values, (1, size))


def _is_constant_row(values, size: int) -> bool:
    """Whether ``values`` is a read-only (size,) array owning its data (so it cannot change)."""
    return (
        isinstance(values, np.ndarray)
        and values.shape == (size,)
        and values.base is None
        and not values.flags.writeable
    )


def _as_row(values: np.ndarray) -> np.ndarray:
    """A (1, A) view of a per-state (A,) constant (other shapes are returned as they are)."""
    values = np.asarray(values)
    return values.reshape(1, -1) if values.ndim == 1 else values
