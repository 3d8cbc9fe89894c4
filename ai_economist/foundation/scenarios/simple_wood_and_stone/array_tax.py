"""``PeriodicBracketTax`` of N gather-trade-build envs as arrays (numpy reference).

The batched twin of :class:`~ai_economist.foundation.components.periodic_tax.PeriodicBracketTax`
for every tax model: ``model_wrapper`` (the planner sets each bracket's rate on a period's
first step; also with ``disable_taxes``, phase 1), ``us-federal-single-filer-2018-scaled``,
``fixed-bracket-rates`` and ``saez`` (its income buffer and estimates kept per env by
:class:`SaezTracker`, the component's own methods, run once a period in a per-env loop;
:func:`saez_between` draws its random rates between Gather's and the regrowth's). The arithmetic is
:mod:`~ai_economist.foundation.components.tax_brackets`' (the dict component calls the same
functions on one env's arrays), so collected taxes, transfers and observations are equal bit
for bit. Envs on the first axis, agents on the second, brackets last:

* :func:`tax_step`          rates on a period's first step, taxes and lump sums on its last
* :func:`tax_observations`  the component's observation fields (agents' and planner's)
* :func:`planner_masks`     the planner's per-bracket rate masks (annealed), flattened
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.saez_tax import SaezTaxMixin
from ai_economist.foundation.components.utils import annealed_tax_limit, annealed_tax_mask

SUPPORTED_MODELS = tb.TAX_MODELS


@dataclasses.dataclass(frozen=True)
class TaxParams:
    """Constants of the batched tax (read from a component by :meth:`from_component`)."""

    tax_model: str
    disable_taxes: bool
    period: int
    cutoffs: np.ndarray  # (B,) bracket lower edges
    disc_rates: np.ndarray  # the planner's rate choices (model_wrapper)
    fixed_rates: np.ndarray  # (B,) us-federal or fixed-bracket-rates (zeros otherwise)
    rate_max: float
    annealing: tuple[float, float] | None  # (warmup, slope) of the annealed rate limit
    rate_min: float = 0.0
    pareto_weight_type: str = "inverse_income"  # Saez
    saez_fixed_elas: float | None = None  # Saez

    @classmethod
    def from_component(cls, tax: Any) -> TaxParams:
        """Parameters of a dict-API ``PeriodicBracketTax``."""
        cfg = tax.config
        if tax.tax_model == "us-federal-single-filer-2018-scaled":
            fixed = np.array(tb.US_FEDERAL_2018_RATES, dtype=np.float64)
        elif tax.tax_model == "fixed-bracket-rates":
            fixed = np.asarray(cfg.fixed_bracket_rates, dtype=np.float64)
        else:
            fixed = np.zeros(len(cfg.bracket_cutoffs))
        return cls(
            tax_model=tax.tax_model,
            disable_taxes=bool(cfg.disable_taxes),
            period=int(cfg.period),
            cutoffs=np.asarray(cfg.bracket_cutoffs, dtype=np.float64),
            disc_rates=np.asarray(cfg.disc_rates, dtype=np.float64),
            fixed_rates=fixed,
            rate_max=float(cfg.rate_max),
            annealing=cfg.tax_annealing_schedule,
            rate_min=float(cfg.rate_min),
            pareto_weight_type=cfg.pareto_weight_type,
            saez_fixed_elas=cfg.saez_fixed_elas,
        )

    @property
    def n_brackets(self) -> int:
        """Number of brackets ``B``."""
        return self.cutoffs.size

    @property
    def planner_sets_rates(self) -> bool:
        """Whether the planner has one rate action per bracket (``model_wrapper``, taxes on)."""
        return self.tax_model == "model_wrapper" and not self.disable_taxes


@dataclasses.dataclass
class TaxState:
    """Per-env tax state: ``(E,)`` cycle positions and totals, ``(E, B)`` rates, ``(E, A)``
    per-agent records of the last tax day."""

    cycle_pos: np.ndarray  # int (E,): 1 on a period's first step, period on its last
    rate_index: np.ndarray  # int (E, B): model_wrapper's index into disc_rates
    rates_obs: np.ndarray  # (E, B): the rates as of the period's first step (curr_rates)
    last_coin: np.ndarray  # (E, A): coin endowment after the last tax day (or the reset)
    last_income: np.ndarray  # (E, A)
    last_marginal_rate: np.ndarray  # (E, A)
    total_collected: np.ndarray  # (E,) taxes collected since the reset
    last_lump_sum: np.ndarray  # (E,) the last tax day's transfer to every agent
    saez_rates: np.ndarray  # (E, B) the Saez model's rates before the annealed cap
    saez: list[SaezTracker] | None  # the Saez model's per-env buffers and estimates


class SaezTracker(SaezTaxMixin):
    """One env's Saez income buffer and elasticity estimates, kept across episodes as in the
    component (the component's own methods; its random rates come from the env's
    generator ``rng``)."""

    def __init__(self, params: TaxParams, rng: np.random.Generator) -> None:
        self.bracket_cutoffs = params.cutoffs
        self.bracket_sizes = tb.bracket_edges_and_sizes(params.cutoffs)[1]
        self.n_brackets = params.n_brackets
        self.rate_min = params.rate_min
        self.curr_rate_max = params.rate_max
        self.pareto_weight_type = params.pareto_weight_type
        self._saez_fixed_elas = params.saez_fixed_elas
        self.world = types.SimpleNamespace(rng=rng)
        self.curr_bracket_tax_rates = np.zeros(params.n_brackets)
        self.running_avg_tax_rates = np.zeros(params.n_brackets)
        self._init_saez()

    _SCALARS = ("elas_tm1", "elas_t", "log_z0_tm1", "log_z0_t", "curr_rate_max",
                "_additions_this_episode", "_reached_min_samples")  # fmt: skip

    def state_dict(self) -> dict[str, Any]:
        """The tracker's mutable state (estimates, rates, income buffers as ``(n, 2)``
        arrays), for exact resumes; its generator is the env's, saved with the world."""
        state: dict[str, Any] = {k: getattr(self, k) for k in self._SCALARS}
        state["curr_bracket_tax_rates"] = np.array(self.curr_bracket_tax_rates, dtype=float)
        state["running_avg_tax_rates"] = np.array(self.running_avg_tax_rates, dtype=float)
        for name in ("local", "global"):
            buffer = getattr(self, f"_{name}_saez_buffer")
            state[f"{name}_buffer"] = np.array(buffer, dtype=np.float64).reshape(-1, 2)
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output."""
        for key in self._SCALARS:
            setattr(self, key, state[key])
        self._reached_min_samples = bool(self._reached_min_samples)
        self.curr_bracket_tax_rates = np.array(state["curr_bracket_tax_rates"], dtype=float)
        self.running_avg_tax_rates = np.array(state["running_avg_tax_rates"], dtype=float)
        for name in ("local", "global"):
            rows = np.asarray(state[f"{name}_buffer"], dtype=np.float64).tolist()
            setattr(self, f"_{name}_saez_buffer", rows)


def initial_state(
    params: TaxParams, num_envs: int, n_agents: int, rngs: list[np.random.Generator] | None = None
) -> TaxState:
    """A state of ``num_envs`` envs; :func:`reset_envs` fills it. ``rngs``: the envs'
    generators (the Saez model draws from them)."""
    saez = None
    if params.tax_model == "saez":
        if rngs is None or len(rngs) != num_envs:
            raise ValueError("the saez tax model needs one generator per env (rngs)")
        saez = [SaezTracker(params, rng) for rng in rngs]
    e, b, a = num_envs, params.n_brackets, n_agents
    return TaxState(
        cycle_pos=np.ones(e, dtype=np.int64),
        rate_index=np.zeros((e, b), dtype=np.int64),
        rates_obs=np.zeros((e, b)),
        last_coin=np.zeros((e, a)),
        last_income=np.zeros((e, a)),
        last_marginal_rate=np.zeros((e, a)),
        total_collected=np.zeros(e),
        last_lump_sum=np.zeros(e),
        saez_rates=np.zeros((e, b)),
        saez=saez,
    )


def rate_limit(params: TaxParams, completions: np.ndarray) -> np.ndarray:
    """(E,) the highest rate allowed after ``completions`` episodes (``curr_rate_max``)."""
    if params.annealing is None:
        return np.full(np.shape(completions), params.rate_max)
    return np.asarray(annealed_tax_limit(completions, *params.annealing, params.rate_max))


def current_rates(params: TaxParams, state: TaxState, completions: np.ndarray) -> np.ndarray:
    """(E, B): ``curr_marginal_rates`` (the planner's picks, or the fixed schedule capped at
    the annealed limit)."""
    if params.tax_model == "model_wrapper":
        return params.disc_rates[state.rate_index]
    rates = state.saez_rates if params.tax_model == "saez" else params.fixed_rates
    return np.minimum(rates, rate_limit(params, completions)[:, None])


def reset_envs(
    state: TaxState, params: TaxParams, which: np.ndarray, coin: np.ndarray, completions: Any
) -> None:
    """Reset the envs selected by bool ``which`` (E,); ``coin`` (E, A): the agents' coin
    endowments after the world's reset (``additional_reset_steps``); ``completions`` (E,):
    the episode counts of the envs' last masks (the annealed limit of fixed schedules)."""
    idx = np.flatnonzero(which)
    state.cycle_pos[idx] = 1
    state.rate_index[idx] = 0
    state.last_coin[idx] = coin[idx]
    state.last_income[idx] = 0.0
    state.last_marginal_rate[idx] = 0.0
    state.total_collected[idx] = 0.0
    state.last_lump_sum[idx] = 0.0
    if state.saez is not None:
        for e in idx:
            state.saez_rates[e] = state.saez[e].running_avg_tax_rates
    state.rates_obs[idx] = current_rates(params, state, np.asarray(completions))[idx]


def check_planner_actions(params: TaxParams, actions: Any, num_envs: int) -> np.ndarray | None:
    """The planner's bracket actions as int (E, B) in ``0..len(disc_rates)`` (0 keeps a
    bracket's rate), or None when the planner sets no rates. Raises ValueError naming the
    env and bracket of a bad value."""
    if not params.planner_sets_rates:
        return None
    shape = (num_envs, params.n_brackets)
    arr = np.zeros(shape, dtype=np.int64) if actions is None else np.asarray(actions)
    if arr.shape != shape or arr.dtype.kind not in "iu":
        raise ValueError(
            f"planner_actions must be ints of shape {shape} (envs, tax brackets), got "
            f"{arr.dtype} {arr.shape}"
        )
    bad = (arr < 0) | (arr > params.disc_rates.size)
    if bad.any():
        e, b = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"planner_actions[{e}, {b}] = {int(arr[e, b])} (bracket {int(params.cutoffs[b]):03d})"
            f" is outside 0..{params.disc_rates.size}"
        )
    return arr


def saez_between(
    params: TaxParams, state: TaxState, completions: np.ndarray
) -> tuple[np.ndarray, Any] | None:
    """The Saez model's rate setting on a period's first step, as ``(envs (E,), call)`` for
    :func:`array_world.gather_part`: the component sets them after Gather's draws and before
    the regrowth's (random rates until its buffer holds 500 samples, then the formula,
    capped at the annealed limit of ``completions``). None for the other models."""
    if state.saez is None:
        return None
    limit = rate_limit(params, completions)

    def set_rates(e: int) -> None:
        tracker = state.saez[e]
        tracker.curr_rate_max = float(limit[e])
        tracker.compute_and_set_new_period_rates_from_saez_formula()
        state.saez_rates[e] = tracker.curr_bracket_tax_rates

    return state.cycle_pos == 1, set_rates


def tax_step(
    params: TaxParams,
    state: TaxState,
    planner_actions: np.ndarray | None,
    inventory_coin: np.ndarray,
    escrow_coin: np.ndarray,
    completions: np.ndarray,
) -> np.ndarray:
    """``component_step`` of every env: on a period's first step the planner's picks
    (action k > 0 sets rate k - 1) become the rates (the Saez model's were set by
    :func:`saez_between` during Gather's part of the step); on its last, each agent's income since
    the last tax day is taxed (never more than its inventory coin) and the revenue is paid
    back in equal shares. ``inventory_coin`` (E, A) is updated in place; returns the bool
    (E,) of the tax days."""
    first = state.cycle_pos == 1
    if planner_actions is not None and first.any():
        pick = first[:, None] & (planner_actions > 0)
        state.rate_index[pick] = planner_actions[pick] - 1
    rates = current_rates(params, state, completions)
    state.rates_obs[first] = rates[first]
    day = state.cycle_pos >= params.period
    if day.any():
        out = tb.enact_taxes(
            inventory_coin[day], escrow_coin[day], state.last_coin[day], params.cutoffs, rates[day]
        )
        inventory_coin[day] = out.inventory_coin
        state.last_coin[day] = out.last_coin
        state.last_income[day] = out.income
        state.last_marginal_rate[day] = out.marginal_rate
        state.total_collected[day] += out.tax_paid.sum(axis=-1)
        state.last_lump_sum[day] = out.lump_sum
        if state.saez is not None:
            for k, e in enumerate(np.flatnonzero(day)):
                state.saez[e]._update_saez_buffer(out.income[k], out.marginal_rate[k])
    state.cycle_pos = np.where(day, 0, state.cycle_pos) + 1
    return day


def tax_observations(
    params: TaxParams, state: TaxState, coin: np.ndarray, completions: np.ndarray
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The component's observation fields: the common ones (each agent and the planner:
    ``is_tax_day``, ``is_first_day``, ``tax_phase`` (E,), ``last_incomes`` (E, A) sorted,
    ``curr_rates`` (E, B)) with the agents' ``marginal_rate`` (E, A); and the planner's
    per-agent ``last_income``, ``last_marginal_rate``, ``curr_marginal_rate`` (E, A).
    ``coin`` (E, A): the agents' coin endowments."""
    pos = state.cycle_pos
    income_obs = state.last_income / params.period
    common = {
        "is_tax_day": (pos >= params.period).astype(np.float64),
        "is_first_day": (pos == 1).astype(np.float64),
        "tax_phase": pos / params.period,
        "last_incomes": np.sort(income_obs, axis=-1),
        "curr_rates": state.rates_obs,
    }
    rates = current_rates(params, state, completions)
    marginal = tb.marginal_rate(coin - state.last_coin, params.cutoffs, rates)
    per_agent = {
        "last_income": income_obs,
        "last_marginal_rate": state.last_marginal_rate,
        "curr_marginal_rate": marginal,
    }
    return {**common, "marginal_rate": marginal}, per_agent


def planner_masks(params: TaxParams, state: TaxState, completions: np.ndarray) -> np.ndarray:
    """float32 (E, B * (R + 1)): the planner's flattened mask, per bracket ``[1]`` (NO-OP)
    then the R rates allowed on a period's first step under the annealed limit (zeros on
    other steps). (E, 1) of ones when the planner sets no rates."""
    e = state.cycle_pos.shape[0]
    if not params.planner_sets_rates:
        return np.ones((e, 1), dtype=np.float32)
    r = params.disc_rates.size
    if params.annealing is None:
        allowed = np.ones((e, r), dtype=np.float32)
    else:
        allowed = annealed_tax_mask(completions, *params.annealing, params.disc_rates)
    allowed = np.where((state.cycle_pos == 1)[:, None], allowed, 0).astype(np.float32)
    masks = np.ones((e, params.n_brackets, r + 1), dtype=np.float32)
    masks[:, :, 1:] = allowed[:, None, :]
    return masks.reshape(e, -1)
