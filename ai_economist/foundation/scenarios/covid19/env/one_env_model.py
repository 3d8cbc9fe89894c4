"""One env's model step with the fewest numpy calls: the arithmetic of the dict API's fast path.

:class:`OneEnvModel` steps a one-env :class:`~.simulation.CovidSimulation` as its
``step_open_close``, ``step_scenario`` and ``compute_rewards`` do (and the ``dynamics``
functions they call), operation for operation: the same ufuncs on the same operands in the
same order, so every state array and reward is bitwise equal.  What it leaves out is work
whose result is known exactly:

* constants of the episode computed once: the spans of the min-max normalisations,
  ``1 - weight`` and the weights' sum of the rewards, ``population * working-age fraction``;
* multiplications by a modulation equal to 1 (``x * 1.0 == x``), the vaccinated fraction
  while no state has vaccines (``x * (1 - 0) == x``), the dropped filter change while it is
  zero everywhere (``x - w * 0 == x`` for finite decays);
* the cooldowns' ``where`` on days no state is at a decision, the softplus's ``where`` when
  no value is above its threshold (``minimum(x, 20) == x`` there), the sum of an unchanged
  subsidy;
* for eta == 2 the power -1 as the reciprocal numpy computes for it, and the planner's
  scalars on Python floats (the same IEEE operations as numpy's scalars).

``tests/foundation/scenarios/covid19/test_one_env_step.py`` holds it to the general path.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ai_economist.foundation.scenarios.covid19.model import dynamics

_EPS = dynamics._EPSILON64
_ZERO, _ONE, _HUNDRED = dynamics._ZERO64, dynamics._ONE64, dynamics._HUNDRED64
_THRESHOLD, _LOW, _HIGH, _DAYS = (
    dynamics._THRESHOLD64,
    dynamics._LOW64,
    dynamics._HIGH64,
    dynamics._DAYS64,
)
_MINUS_ONE = dynamics._f64(-1.0)
_FLOAT64, _INT64 = np.dtype(np.float64), np.dtype(np.int64)
_add_reduce = np.add.reduce


class OneEnvModel:
    """Steps ``sim`` (``num_envs == 1``, simulated policies) like its own methods do."""

    def __init__(self, sim) -> None:
        if sim.num_envs != 1 or sim.use_real_world_policies:
            raise ValueError("OneEnvModel steps one env with simulated policies only")
        self.sim = sim
        self._constants: SimpleNamespace | None = None
        self._subsidy_sum: tuple | None = None
        self._finite_cache: tuple | None = None

    def constants(self) -> SimpleNamespace:
        """``sim._operands()`` plus the derived constants (rebuilt when the operands are)."""
        ops = self.sim._operands()
        k = self._constants
        if k is not None and k.ops is ops:
            return k
        k = SimpleNamespace(ops=ops)
        k.health_span = (ops.max_agent_health - ops.min_agent_health) + _EPS
        k.economic_span = (ops.max_agent_economic - ops.min_agent_economic) + _EPS
        weight = ops.agent_health_weightage
        k.economy_weight = _ONE - weight
        k.weight_sum = weight + k.economy_weight
        k.working_age = ops.population * ops.pop_between_age_18_65
        k.scenario = (  # the operands of scenario_step, unpacked at once
            ops.population,
            ops.beta_intercepts,
            ops.beta_slopes,
            ops.gamma,
            ops.death_rate,
            ops.filter_decay,
            ops.filter_weights,
            ops.unemployment_bias,
            ops.infection_too_sick_to_work_rate,
            ops.pop_between_age_18_65,
            ops.daily_production_per_worker,
            k.working_age,
        )
        self._constants = k
        return k

    def usable(self) -> bool:
        """Whether the state has the dtypes the mirrored operations assume (float64 model
        state, int64 levels), as ``reset`` leaves it."""
        sim = self.sim
        return (
            getattr(sim.susceptible, "dtype", None) is _FLOAT64
            and getattr(sim.stringency_level, "dtype", None) is _INT64
            and getattr(sim.cooldown_until, "dtype", None) is _INT64
        )

    # -------------------------------------------------------------- components
    def open_close(self, t: int, actions: np.ndarray, period: int) -> None:
        """``step_open_close`` (``dynamics.open_close_step``) for actions already checked to
        be in 0..levels, so ``valid`` is ``actions > 0``."""
        sim = self.sim
        actions = actions.reshape(1, -1)
        chosen = actions > 0
        cooldown = sim.cooldown_until
        sim.stringency_level = np.where(chosen, actions, sim.stringency_level)
        at_decision = cooldown == t - 1  # t == cooldown + 1
        if np.count_nonzero(at_decision):
            extension = np.where(chosen, period, 1)
            sim.cooldown_until = np.where(at_decision, cooldown + extension, cooldown)

    # ---------------------------------------------------------------- scenario
    def scenario_step(self, t: int) -> None:
        """``CovidSimulation.step_scenario`` of one env on step ``t``."""
        sim, p = self.sim, self.sim.params
        (
            population,
            beta_intercepts,
            beta_slopes,
            gamma,
            death_rate,
            filter_decay,
            filter_weights,
            unemployment_bias,
            sick_rate,
            working_fraction,
            production_per_worker,
            working_age,
        ) = self.constants().scenario
        length = p.history_len
        by_slot = sim.history.swapaxes(0, 1)
        lagged = by_slot[(t - p.beta_delay) % length].astype(np.float64)
        dropped = by_slot[(t - p.filter_len) % length] - by_slot[(t - p.filter_len - 1) % length]
        previous = by_slot[(t - 1) % length]
        modulations = sim._modulations()
        vaccines = sim.vaccines_available
        sim.vaccines_available = np.zeros(vaccines.shape)
        # dynamics.sir_step
        s, i = sim.susceptible, sim.infected
        beta = (
            _scaled(modulations[0], beta_intercepts) + _scaled(modulations[1], beta_slopes) * lagged
        )
        num_vaccinated = np.minimum(vaccines, s)
        leaving = beta * s / population * i
        if np.count_nonzero(vaccines):  # else the vaccinated fraction is 0: x * (1 - 0) == x
            leaving = leaving * (_ONE - np.minimum(_ONE, vaccines / (s + _EPS)))
        leaving = leaving + num_vaccinated
        d_recovered = gamma * i + num_vaccinated
        sim.susceptible = np.maximum(s - leaving, _ZERO)
        sim.infected = np.maximum(i + (leaving - d_recovered), _ZERO)
        sim.recovered = new_r = np.maximum(sim.recovered + d_recovered, _ZERO)
        sim.vaccinated = new_v = np.maximum(sim.vaccinated + num_vaccinated, _ZERO)
        deaths = death_rate * (new_r - new_v)
        sim.beta = beta
        sim.new_deaths = deaths - sim.deaths
        sim.deaths = deaths
        new_delta = sim.stringency_level - previous
        by_slot[t % length] = sim.stringency_level
        # dynamics.unemployment_filter_update, unemployment_step
        filters = sim.filter_state * filter_decay + new_delta[..., None]
        if np.count_nonzero(dropped) or not self._finite(p.window_decay):
            filters = filters - p.window_decay * dropped[..., None]  # else x - 0 == x
        sim.filter_state = filters
        signal = _scaled(modulations[2], _add_reduce(filters * filter_weights, axis=-1))
        rate_percent = _softplus(signal) + unemployment_bias
        sim.unemployed = unemployed = rate_percent * population / _HUNDRED
        # dynamics.economy_step
        incapacitated = sick_rate * sim.infected + deaths
        cant_work = incapacitated * working_fraction + unemployed
        can_work = np.maximum(_ZERO, working_age - cant_work)
        sim.productivity = productivity = can_work * production_per_worker
        sim.postsubsidy_productivity = productivity + sim.subsidy

    def _finite(self, values: np.ndarray) -> bool:
        """Whether every value of ``values`` is finite, cached by identity (a parameter
        array: like ``sim._operands``, edits in place are not looked for)."""
        cached = self._finite_cache
        if cached is None or cached[0] is not values:
            cached = self._finite_cache = (values, bool(np.isfinite(values).all()))
        return cached[1]

    # ----------------------------------------------------------------- rewards
    def rewards(self) -> tuple[np.ndarray, float]:
        """``CovidSimulation.compute_rewards`` of one env: agent rewards (1, A) and the
        planner's reward as a float."""
        sim, p, k = self.sim, self.sim.params, self.constants()
        c, eta = k.ops, p.economic_reward_crra_eta
        new_deaths, output, subsidy = sim.new_deaths, sim.postsubsidy_productivity, sim.subsidy
        # dynamics.agent_indices
        health = -new_deaths * c.value_of_life / c.agents_health_norm
        economic = _crra(output / c.agents_economic_norm, eta)
        health = (health - c.min_agent_health) / k.health_span
        economic = (economic - c.min_agent_economic) / k.economic_span
        # dynamics.planner_indices, on Python floats (the same IEEE operations as on numpy
        # scalars) unless a divisor is zero (Python raises where numpy gives inf or nan)
        health_span = (p.max_planner_health - p.min_planner_health) + dynamics.EPSILON
        economic_span = (p.max_planner_economic - p.min_planner_economic) + dynamics.EPSILON
        weight = p.planner_health_weightage
        economy_weight = 1.0 - weight
        divisors = (
            p.planner_health_norm,
            p.planner_economic_norm,
            health_span,
            economic_span,
            weight + economy_weight,
            p.reward_normalization_factor,
        )
        scalar = float if all(divisors) else np.float64
        planner_health = -scalar(_add_reduce(new_deaths[0], axis=-1)) * p.value_of_life
        planner_health = planner_health / p.planner_health_norm
        net_output = scalar(_add_reduce(output[0], axis=-1)) - (
            1.0 + p.risk_free_interest_rate
        ) * scalar(self._total_subsidy(subsidy))
        planner_economic = _crra_scalar(net_output / p.planner_economic_norm, eta)
        planner_health = (planner_health - p.min_planner_health) / health_span
        planner_economic = (planner_economic - p.min_planner_economic) / economic_span
        sim.health_index += health
        sim.economic_index += economic
        sim.planner_health_index[0] += planner_health
        sim.planner_economic_index[0] += planner_economic
        # dynamics.get_rew
        weight = c.agent_health_weightage
        agent_rewards = (weight * health + k.economy_weight * economic) / k.weight_sum
        weight = p.planner_health_weightage
        planner_reward = (weight * planner_health + economy_weight * planner_economic) / (
            weight + economy_weight
        )
        if p.reward_normalization_factor != 1.0:
            agent_rewards = agent_rewards / p.reward_normalization_factor
            planner_reward = planner_reward / p.reward_normalization_factor
        return agent_rewards, float(planner_reward)

    def _total_subsidy(self, subsidy: np.ndarray):
        """The sum over the states of ``subsidy`` (1, A), kept while it is the same read-only array."""
        cached = self._subsidy_sum
        if cached is None or cached[0] is not subsidy or subsidy.flags.writeable:
            cached = self._subsidy_sum = (subsidy, _add_reduce(subsidy[0], axis=-1))
        return cached[1]


def _scaled(modulation: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``modulation * x`` (``modulation`` 0-d), or ``x`` itself when the modulation is 1
    (x * 1.0 == x, bit for bit)."""
    return x if float(modulation) == 1.0 else modulation * x


def _softplus(x: np.ndarray) -> np.ndarray:
    """``dynamics.softplus`` of a float64 array: without the ``where`` when no value is
    above the threshold (then ``minimum(x, threshold)`` is ``x``)."""
    above = x > _THRESHOLD
    if np.count_nonzero(above):
        return np.where(above, x, np.log1p(np.exp(np.minimum(x, _THRESHOLD))))
    return np.log1p(np.exp(x))


def _crra(x: np.ndarray, eta: float) -> np.ndarray:
    """``dynamics.crra_nonlinearity`` of a float64 array (365 days a year)."""
    annual = np.minimum(np.maximum(x * _DAYS, _LOW), _HIGH)
    if eta == 2.0:  # numpy computes ``annual ** -1.0`` as this reciprocal
        utility = (np.reciprocal(annual) - _ONE) / _MINUS_ONE
    elif eta == 1:
        utility = np.log(annual)
    else:
        utility = (annual ** (1.0 - eta) - _ONE) / (1.0 - eta)
    return (_ONE + utility) / _DAYS


def _crra_scalar(x, eta: float):
    """``dynamics.crra_nonlinearity`` of a scalar (365 days a year).  For eta == 2 (the
    published value) on Python floats: numpy computes the power -1.0 as a reciprocal and its
    other operations are IEEE-rounded as Python's, so the values are the same."""
    if eta == 2.0:
        annual = x * 365.0
        if annual != annual:  # NaN propagates through maximum and minimum
            return (1.0 + (1.0 / annual - 1.0) / -1.0) / 365
        annual = 3.0 if annual > 3.0 else (annual if annual > 0.1 else 0.1)
        return (1.0 + (1.0 / annual - 1.0) / -1.0) / 365
    annual = np.minimum(np.maximum(np.asarray(x, dtype=np.float64) * _DAYS, _LOW), _HIGH)
    if eta == 1:
        utility = np.log(annual)
    else:
        utility = (np.asarray(annual) ** (1.0 - eta) - 1.0) / (1.0 - eta)
    return (1.0 + utility) / 365
