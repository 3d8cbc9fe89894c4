"""``PeriodicBracketTax``: periodic income taxes in brackets, redistributed as a lump sum.

Every ``period`` steps: on the period's first step the bracket rates are set (by the
planner's actions, a fixed schedule or the Saez formula); on its last step each agent's
income since the previous tax day is taxed bracket by bracket, and the revenue is paid back
to all agents in equal shares. The arithmetic lives in :mod:`tax_brackets` and :mod:`saez`
(plain arrays shared with the batched one-step economy); this class keeps the per-env state,
observations, masks, metrics and the dense log.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.base.validation import with_keywords
from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.saez_tax import SaezTaxMixin
from ai_economist.foundation.components.tax_config import TAX_PARAMETERS, PlannerTaxMasks, TaxConfig


def _nan_mean(values: Any) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


@component_registry.add
class PeriodicBracketTax(SaezTaxMixin, BaseComponent):
    """Periodically collect bracketed income taxes and redistribute them as a lump sum.

    Args (after the base component's): see :class:`TaxConfig` for every parameter:
    ``disable_taxes``, ``tax_model`` (``"model_wrapper"``, ``"saez"``,
    ``"us-federal-single-filer-2018-scaled"``, ``"fixed-bracket-rates"``), ``period``,
    ``rate_min``, ``rate_max``, ``rate_disc``, ``n_brackets``, ``top_bracket_cutoff``,
    ``usd_scaling``, ``bracket_spacing``, ``fixed_bracket_rates``, ``pareto_weight_type``,
    ``saez_fixed_elas``, ``tax_annealing_schedule`` and (ours) ``bracket_cutoffs``.

    Note: list it after the components that pay agents, so a period's income is taxed on
    the period's last step.
    """

    name = "PeriodicBracketTax"
    component_type = "PeriodicTax"
    required_entities = ["Coin"]
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]

    def __init__(self, *base_component_args: Any, **base_component_kwargs: Any) -> None:
        tax_kwargs = {
            p.name: base_component_kwargs.pop(p.name)
            for p in TAX_PARAMETERS
            if p.name in base_component_kwargs
        }
        super().__init__(*base_component_args, **base_component_kwargs)
        cfg = TaxConfig(**tax_kwargs).checked()
        self.config = cfg
        self.disable_taxes = cfg.disable_taxes
        self.tax_model = cfg.tax_model
        self.period = cfg.period
        self.rate_min, self.rate_max, self.rate_disc = cfg.rate_min, cfg.rate_max, cfg.rate_disc
        self.use_discretized_rates = self.tax_model == "model_wrapper"
        self.disc_rates = cfg.disc_rates if self.use_discretized_rates else None
        self.n_disc_rates = len(cfg.disc_rates) if self.use_discretized_rates else 0
        self.bracket_spacing = cfg.bracket_spacing
        self.usd_scale = cfg.usd_scaling
        self.bracket_cutoffs = cfg.bracket_cutoffs
        self.n_brackets = len(self.bracket_cutoffs)
        self.top_bracket_cutoff = float(self.bracket_cutoffs[-1])
        self.bracket_edges, self.bracket_sizes = tb.bracket_edges_and_sizes(self.bracket_cutoffs)
        self._fixed_bracket_rates = cfg.fixed_bracket_rates
        self.tax_annealing_schedule = cfg.tax_annealing_schedule
        self.pareto_weight_type = cfg.pareto_weight_type
        self._saez_fixed_elas = cfg.saez_fixed_elas
        self.curr_bracket_tax_rates = np.zeros(self.n_brackets)
        self.curr_rate_indices = [0] * self.n_brackets
        self.running_avg_tax_rates = np.zeros(self.n_brackets)
        self._init_saez()
        self._masks = PlannerTaxMasks(cfg, self.bracket_keys)
        self._reset_trackers(np.zeros(self.n_agents))

    @property
    def bracket_keys(self) -> list[str]:
        """``"000"``, ``"009"``, ...: each bracket's cutoff as used in action and metric names."""
        return [f"{int(c):03d}" for c in self.bracket_cutoffs]

    # ----------------------------------------------------------------- rates
    @property
    def us_federal_single_filer_2018_scaled(self) -> list[float]:
        """The 2018 US federal single-filer marginal rates, lowest bracket first."""
        return list(tb.US_FEDERAL_2018_RATES)

    @property
    def fixed_bracket_rates(self) -> np.ndarray | None:
        """The rates given as ``fixed_bracket_rates`` (None for other tax models)."""
        return self._fixed_bracket_rates

    @property
    def curr_rate_max(self) -> float:
        """Highest allowed rate, given the progress of any tax annealing."""
        return self._masks.curr_rate_max

    @property
    def curr_marginal_rates(self) -> np.ndarray:
        """The current marginal rate of every bracket."""
        if self.use_discretized_rates:
            return self.disc_rates[self.curr_rate_indices]
        if self.tax_model == "us-federal-single-filer-2018-scaled":
            return np.minimum(np.array(tb.US_FEDERAL_2018_RATES), self.curr_rate_max)
        if self.tax_model == "saez":
            return np.minimum(self.curr_bracket_tax_rates, self.curr_rate_max)
        return np.minimum(self._fixed_bracket_rates, self.curr_rate_max)

    def set_new_period_rates_model(self) -> None:
        """Read the planner's bracket actions: 0 keeps a bracket's rate, k picks rate k - 1."""
        if self.disable_taxes:
            return
        planner = self.world.planner
        for i, key in enumerate(self.bracket_keys):
            action = planner.get_component_action(self.name, f"TaxIndexBracket_{key}")
            if action is None or action == 0:
                continue
            if not 1 <= action <= self.n_disc_rates:
                raise ValueError(
                    f"{self.name}: planner action {action} for bracket {key} is outside "
                    f"0..{self.n_disc_rates}"
                )
            self.curr_rate_indices[i] = int(action - 1)

    # ----------------------------------------------------------- tax rules
    def income_bin(self, income: float) -> float:
        """The cutoff of the bracket ``income`` falls in (0 for negative incomes)."""
        return float(self.bracket_cutoffs[tb.bracket_index(income, self.bracket_cutoffs)])

    def marginal_rate(self, income: float) -> float:
        """The current marginal rate at ``income`` (0 for negative incomes)."""
        return float(tb.marginal_rate(income, self.bracket_cutoffs, self.curr_marginal_rates))

    def taxes_due(self, income: float) -> float:
        """The tax owed on ``income`` under the current rates."""
        return float(tb.taxes_due(income, self.bracket_cutoffs, self.curr_marginal_rates))

    def enact_taxes(self) -> None:
        """Tax each agent's income of the period and pay the revenue back as a lump sum."""
        agents = self.world.agents
        rates = np.array(self.curr_marginal_rates)
        inventory = np.array([a.state["inventory"]["Coin"] for a in agents], dtype=np.float64)
        escrow = np.array([a.state["escrow"]["Coin"] for a in agents], dtype=np.float64)
        out = tb.enact_taxes(inventory, escrow, self.last_coin, self.bracket_cutoffs, rates)
        for agent, coin in zip(agents, out.inventory_coin):
            agent.state["inventory"]["Coin"] = float(coin)
        tax_dict: dict[str, Any] = {"schedule": rates, "cutoffs": np.array(self.bracket_cutoffs)}
        for i, agent in enumerate(agents):
            tax_dict[str(agent.idx)] = {
                "income": float(out.income[i]),
                "tax_paid": float(out.tax_paid[i]),
                "marginal_rate": float(out.marginal_rate[i]),
                "effective_rate": float(out.effective_rate[i]),
                "lump_sum": float(out.lump_sum),
            }
        for key, rate in zip(self.bracket_keys, rates):
            self._schedules[key].append(float(rate))
        for b in tb.bracket_index(out.income, self.bracket_cutoffs):
            self._occupancy[self.bracket_keys[b]] += 1
        self.total_collected_taxes += float(out.tax_paid.sum())
        self.all_effective_tax_rates.extend(out.effective_rate.tolist())
        self.last_income = out.income
        self.last_marginal_rate = out.marginal_rate
        self.last_effective_tax_rate = out.effective_rate
        self.last_coin = out.last_coin
        self.taxes.append(tax_dict)
        self._refresh_income_obs()
        if self.tax_model == "saez":
            self._update_saez_buffer(out.income, out.marginal_rate)

    # ------------------------------------------------------ component API
    def get_n_actions(self, agent_cls_name: str) -> list[tuple[str, int]] | int:
        """The planner (model_wrapper, taxes on) picks one rate index per bracket."""
        if (
            agent_cls_name == "BasicPlanner"
            and self.tax_model == "model_wrapper"
            and not self.disable_taxes
        ):
            return [(f"TaxIndexBracket_{k}", self.n_disc_rates) for k in self.bracket_keys]
        return 0

    def get_additional_state_fields(self, agent_cls_name: str) -> dict[str, Any]:
        """No extra agent state."""
        return {}

    def component_step(self) -> None:
        """Set the rates on a period's first step; enact taxes on its last."""
        if self.tax_cycle_pos == 1:
            if self.tax_model == "model_wrapper":
                self.set_new_period_rates_model()
            if self.tax_model == "saez":
                self.compute_and_set_new_period_rates_from_saez_formula()
            self._curr_rates_obs = np.array(self.curr_marginal_rates)
        if self.tax_cycle_pos >= self.period:
            self.enact_taxes()
            self.tax_cycle_pos = 0
        else:
            self.taxes.append([])
        self.tax_cycle_pos += 1

    def generate_observations(self) -> dict[str, dict[str, Any]]:
        """Cycle position, last period's incomes and the rates; per-agent planner entries."""
        common = {
            "is_tax_day": float(self.tax_cycle_pos >= self.period),
            "is_first_day": float(self.tax_cycle_pos == 1),
            "tax_phase": self.tax_cycle_pos / self.period,
            "last_incomes": self._last_income_obs_sorted,
            "curr_rates": self._curr_rates_obs,
        }
        agents = self.world.agents
        curr = self._current_marginal_rates()
        last_income, last_rate = self._last_income_list, self._last_marginal_list
        obs: dict[str, dict[str, Any]] = {self.world.planner.idx: dict(common)}
        for i, agent in enumerate(agents):
            k = str(agent.idx)
            obs[k] = {**common, "marginal_rate": curr[i]}
            obs["p" + k] = {
                "last_income": last_income[i],
                "last_marginal_rate": last_rate[i],
                "curr_marginal_rate": curr[i],
            }
        return obs

    def observation_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_observations` (``base/direct_obs.py``)."""
        keys = [self.world.planner.idx, *(str(a.idx) for a in self.world.agents)]
        agent_keys = keys[1:]
        common = ("is_tax_day", "is_first_day", "tax_phase")
        slots.scalars([(k, f) for k in keys for f in common])
        slots.scalars([(k, "marginal_rate") for k in agent_keys])
        per_agent = ("last_income", "last_marginal_rate", "curr_marginal_rate")
        slots.scalars([("p" + k, f) for k in agent_keys for f in per_agent])
        incomes = np.stack([slots.positions(k, "last_incomes") for k in keys])
        rates = np.stack([slots.positions(k, "curr_rates") for k in keys])
        flat_incomes, flat_rates = incomes.ravel(), rates.ravel()
        n_keys = len(keys)

        def write(buf: np.ndarray, scalars: list, outs: dict) -> None:
            pos, period = self.tax_cycle_pos, self.period
            scalars.extend([float(pos >= period), float(pos == 1), pos / period] * n_keys)
            curr = self._current_marginal_rates()
            scalars.extend(curr)
            for row in zip(self._last_income_list, self._last_marginal_list, curr, strict=True):
                scalars.extend(row)
            _put_rows(buf, incomes, flat_incomes, self._last_income_obs_sorted)
            _put_rows(buf, rates, flat_rates, self._curr_rates_obs)

        return write

    def _current_marginal_rates(self) -> list[float]:
        """Each agent's marginal rate on its income since the last tax day (``marginal_rate``
        of the live rates), recomputed only when the coin, the last tax day's coin or the
        rates changed since the previous call (most steps change none of them). Plain Python
        floats for the few agents: the same float64 subtraction and bracket search
        (``bisect_right`` is ``searchsorted(side="right")``) as ``tb.marginal_rate``."""
        endowment = [  # total_endowment("Coin"), inlined
            a.state["inventory"]["Coin"] + a.state["escrow"]["Coin"] for a in self._world.agents
        ]
        key = (endowment, self.last_coin.tobytes(), self._live_rate_key())
        if key != self._marginal_cache_key:
            rates = self._live_rate_list()
            cutoffs = np.asarray(self.bracket_cutoffs, dtype=np.float64).tolist()
            self._marginal_cache = [
                0.0 if income < 0 else rates[max(bisect.bisect_right(cutoffs, income) - 1, 0)]
                for income in (
                    float(e) - c for e, c in zip(endowment, self.last_coin.tolist(), strict=True)
                )
            ]
            self._marginal_cache_key = key
        return self._marginal_cache

    def _indexed_rates(self) -> bool:
        """Whether the live rates are discretized ones read from a float64 table by a list
        of indices (what :meth:`_live_rate_list` and :meth:`_live_rate_key` read directly)."""
        disc = self.disc_rates
        return (
            self.use_discretized_rates
            and type(self.curr_rate_indices) is list
            and type(disc) is np.ndarray
            and disc.dtype == np.float64
            and disc.ndim == 1
        )

    def _live_rate_list(self) -> list[float]:
        """``curr_marginal_rates`` as a list of float64 values; discretized rates (float64
        table, list of indices) read by list indexing instead of a fancy index."""
        if self._indexed_rates():
            table = self.disc_rates.tolist()
            return [table[i] for i in self.curr_rate_indices]
        return np.asarray(self.curr_marginal_rates, dtype=np.float64).tolist()

    def _live_rate_key(self) -> Any:
        """What fixes :meth:`_live_rate_list`: the table's bytes and the indices for
        discretized rates (without building the list), else the list itself."""
        if self._indexed_rates():
            return self.disc_rates.tobytes(), tuple(self.curr_rate_indices)
        return self._live_rate_list()

    def generate_masks(self, completions: int = 0) -> dict[str, Any]:
        """Planner rate masks: all zero except on a period's first step (annealing applies)."""
        self._masks.update_completions(completions)
        if self.disable_taxes or self.tax_model != "model_wrapper":
            return {}
        return {self.world.planner.idx: self._masks.masks(self.tax_cycle_pos == 1, completions)}

    def mask_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_masks` (``base/direct_masks.py``), for the
        planner-set rates (None otherwise)."""
        if self.disable_taxes or self.tax_model != "model_wrapper":
            return None
        planner, names = self.world.planner.idx, self._masks.sub_names
        where = np.concatenate([slots.positions(planner, name) for name in names])
        # the last masks dict, its sub-spaces concatenated, and whether any entry is nonzero
        joined: list = [None, None, True]

        def write(buf: np.ndarray, completions: int) -> None:
            self._masks.update_completions(completions)
            masks = self._masks.masks(self.tax_cycle_pos == 1, completions)
            if joined[0] is not masks:  # PlannerTaxMasks keeps each dict (and its arrays)
                values = np.concatenate([masks[name] for name in names])
                joined[:] = masks, values, bool(np.count_nonzero(values))
            if joined[2]:  # the buffer starts at zeros here: all-zero masks write nothing
                buf[where] = joined[1]

        return write

    def _reset_trackers(self, last_coin: np.ndarray) -> None:
        self.tax_cycle_pos = 1
        self.last_coin = np.asarray(last_coin, dtype=np.float64)
        self.last_income = np.zeros(self.n_agents)
        self.last_marginal_rate = np.zeros(self.n_agents)
        self.last_effective_tax_rate = np.zeros(self.n_agents)
        self.taxes: list[Any] = []
        self.total_collected_taxes = 0.0
        self.all_effective_tax_rates: list[float] = []
        self._schedules: dict[str, list[float]] = {k: [] for k in self.bracket_keys}
        self._occupancy = {k: 0 for k in self.bracket_keys}
        self._curr_rates_obs = np.array(self.curr_marginal_rates)
        self._marginal_cache_key: tuple | None = None
        self._marginal_cache: list[float] = []
        self._refresh_income_obs()

    def _refresh_income_obs(self) -> None:
        self._last_income_obs = np.asarray(self.last_income, dtype=np.float64) / self.period
        self._last_income_obs_sorted = np.sort(self._last_income_obs)
        self._last_income_list = self._last_income_obs.tolist()
        self._last_marginal_list = np.asarray(self.last_marginal_rate, dtype=np.float64).tolist()

    def additional_reset_steps(self) -> None:
        """Reset the cycle and trackers; Saez starts from its running-average rates."""
        self.curr_rate_indices = [0] * self.n_brackets
        if self.tax_model == "saez":
            self.curr_bracket_tax_rates = np.array(self.running_avg_tax_rates)
        self._masks.clear_cache()
        self._reset_trackers([a.total_endowment("Coin") for a in self.world.agents])

    def get_metrics(self) -> dict[str, float]:
        """Bracket rates and occupancy, taxes collected, effective rates, Saez elasticity."""
        out: dict[str, float] = {}
        n_observed = max(1, sum(self._occupancy.values()))
        for k in self.bracket_keys:
            out[f"avg_bracket_rate/{k}"] = _nan_mean(self._schedules[k])
            out[f"bracket_occupancy/{k}"] = self._occupancy[k] / n_observed
        if self.disable_taxes:
            return out
        out["avg_effective_tax_rate"] = _nan_mean(self.all_effective_tax_rates)
        out["total_collected_taxes"] = float(self.total_collected_taxes)
        endow = np.array([a.total_endowment("Coin") for a in self.world.agents])
        tax_days = [d for d in self.taxes if d]
        for i, tag in ((int(np.argmin(endow)), "poorest"), (int(np.argmax(endow)), "richest")):
            income = np.maximum(0, [d[str(i)]["income"] for d in tax_days]).sum()
            paid = float(np.sum([d[str(i)]["tax_paid"] for d in tax_days]))
            out[f"avg_tax_rate/{tag}"] = paid / max(0.001, float(income))
        if self.tax_model == "saez":
            out["saez/estimated_elasticity"] = self.elas_tm1
        return out

    def get_dense_log(self) -> list[Any] | None:
        """Per step: ``[]``, or on tax days the schedule, cutoffs and each agent's taxes."""
        return None if self.disable_taxes else self.taxes


# The keywords are TaxConfig's fields, defaults included (listed there only).
PeriodicBracketTax.__init__.__signature__ = with_keywords(
    PeriodicBracketTax.__init__, TAX_PARAMETERS
)


def _put_rows(buf: np.ndarray, where: np.ndarray, flat: np.ndarray, values: np.ndarray) -> None:
    """``buf[where] = values`` (``where``: one row of positions per key, ``flat`` the same
    raveled); one ``put`` when ``values`` is one row (put repeats it for every row)."""
    if values.shape == where.shape[1:]:
        buf.put(flat, values)
    else:
        buf[where] = values
