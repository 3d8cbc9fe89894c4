"""Parameters of ``PeriodicBracketTax``, validated once, and its planner masks.

:class:`TaxConfig` turns the component's keyword arguments into checked values (bad input
raises an error naming the argument, the value and what was expected, with close matches
for unknown names). :class:`PlannerTaxMasks` holds the planner's per-bracket masks under tax
annealing.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.utils import annealed_tax_limit, annealed_tax_mask


def _number(name: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if (low is not None and value < low) or (high is not None and value > high) or np.isnan(value):
        raise ValueError(f"{name} must be in [{low}, {high}], got {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class TaxConfig:
    """Checked parameters of ``PeriodicBracketTax`` (defaults as in Foundation 1.7.1).

    Attributes:
        disable_taxes: rates forced to 0 (the observation space is unchanged).
        tax_model: "model_wrapper" (the planner's actions), "us-federal-single-filer-2018-scaled",
            "fixed-bracket-rates" or "saez".
        period: steps per tax period (int >= 1).
        rate_min, rate_max: bounds of every bracket rate, 0 <= min <= max <= 1 (0 if disabled).
        rate_disc: step between the planner's rate choices (model_wrapper), in (0, 1).
        n_brackets: brackets for "linear"/"log" spacing (>= 2; us-federal has 7).
        top_bracket_cutoff: lower edge of the top bracket for "linear"/"log" (>= 10).
        usd_scaling: divisor of the US federal cutoffs (> 0).
        bracket_spacing: "us-federal", "linear" or "log".
        fixed_bracket_rates: one rate in [0, 1] per bracket ("fixed-bracket-rates" only).
        pareto_weight_type: Saez welfare weights, "inverse_income" or "uniform".
        saez_fixed_elas: a fixed elasticity (>= 0) for the Saez formula instead of the estimate.
        tax_annealing_schedule: ``[warmup, slope]`` of the annealed rate limit, or None.
        bracket_cutoffs: explicit bracket lower edges (ours): start at 0, strictly increasing;
            overrides ``bracket_spacing``.
    """

    disable_taxes: bool = False
    tax_model: str = "model_wrapper"
    period: int = 100
    rate_min: float = 0.0
    rate_max: float = 1.0
    rate_disc: float = 0.05
    n_brackets: int = 5
    top_bracket_cutoff: float = 100.0
    usd_scaling: float = 1000.0
    bracket_spacing: str = "us-federal"
    fixed_bracket_rates: Any = None
    pareto_weight_type: str = "inverse_income"
    saez_fixed_elas: float | None = None
    tax_annealing_schedule: Any = None
    bracket_cutoffs: Any = None
    disc_rates: Any = None  # derived

    def checked(self) -> TaxConfig:
        """A copy with every value checked and the derived ``disc_rates`` set."""
        disabled = bool(self.disable_taxes)
        model = tb.check_choice("tax_model", self.tax_model, tb.TAX_MODELS)
        period = int(_number("period", self.period, 1))
        if period != self.period:
            raise ValueError(f"period must be an int >= 1, got {self.period!r}")
        rate_min = 0.0 if disabled else _number("rate_min", self.rate_min, 0.0, 1.0)
        rate_max = 0.0 if disabled else _number("rate_max", self.rate_max, 0.0, 1.0)
        if rate_min > rate_max:
            raise ValueError(f"rate_min ({rate_min}) must be <= rate_max ({rate_max})")
        rate_disc = _number("rate_disc", self.rate_disc, 0.0, 1.0)
        if not 0 < rate_disc < 1:
            raise ValueError(f"rate_disc must be in (0, 1), got {rate_disc!r}")
        cutoffs = self._cutoffs()
        if model == "us-federal-single-filer-2018-scaled" and self.bracket_spacing != "us-federal":
            raise ValueError(
                f"tax_model {model!r} needs bracket_spacing 'us-federal', got {self.bracket_spacing!r}"
            )
        fixed = None
        if model == "fixed-bracket-rates":
            if self.fixed_bracket_rates is None:
                raise ValueError(
                    "tax_model 'fixed-bracket-rates' needs fixed_bracket_rates (one rate per bracket)"
                )
            fixed = tb.check_rates("fixed_bracket_rates", self.fixed_bracket_rates, len(cutoffs))
        disc = tb.discretized_rates(rate_min, rate_max, rate_disc)
        if model == "model_wrapper" and len(disc) < 2 and not disabled:
            raise ValueError(
                f"rate_min={rate_min}, rate_max={rate_max}, rate_disc={rate_disc} leave fewer than 2 rates to choose"
            )
        tb.check_choice("pareto_weight_type", self.pareto_weight_type, tb.PARETO_WEIGHT_TYPES)
        elas = (
            None
            if self.saez_fixed_elas is None
            else _number("saez_fixed_elas", self.saez_fixed_elas, 0.0)
        )
        schedule = self.tax_annealing_schedule
        if schedule is not None:
            if not isinstance(schedule, (list, tuple)) or len(schedule) != 2:
                raise ValueError(
                    f"tax_annealing_schedule must be [warmup, slope], got {schedule!r}"
                )
            schedule = (
                _number("tax_annealing_schedule[0]", schedule[0]),
                _number("tax_annealing_schedule[1]", schedule[1]),
            )
        return dataclasses.replace(
            self, disable_taxes=disabled, tax_model=model, period=period, rate_min=rate_min,
            rate_max=rate_max, rate_disc=rate_disc, fixed_bracket_rates=fixed,
            saez_fixed_elas=elas, tax_annealing_schedule=schedule, bracket_cutoffs=cutoffs,
            disc_rates=disc,
        )  # fmt: skip

    def _cutoffs(self) -> np.ndarray:
        cutoffs = self._raw_cutoffs()
        keys = [int(c) for c in cutoffs]
        if len(set(keys)) != len(keys):
            raise ValueError(
                f"bracket cutoffs {cutoffs.tolist()} must have distinct integer parts: the "
                "planner's actions and the metrics are named after int(cutoff)"
            )
        return cutoffs

    def _raw_cutoffs(self) -> np.ndarray:
        if self.bracket_cutoffs is not None:
            return tb.check_bracket_cutoffs(self.bracket_cutoffs)
        spacing = tb.check_choice(
            "bracket_spacing", str(self.bracket_spacing).lower(), tb.BRACKET_SPACINGS
        )
        n = int(_number("n_brackets", self.n_brackets, 2))
        top = _number("top_bracket_cutoff", self.top_bracket_cutoff, 10.0)
        usd = _number("usd_scaling", self.usd_scaling, 0.0)
        if usd <= 0:
            raise ValueError(f"usd_scaling must be > 0, got {usd!r}")
        return tb.check_bracket_cutoffs(tb.make_bracket_cutoffs(spacing, n, top, usd))


TAX_PARAMETERS = tuple(
    inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type)
    for f in dataclasses.fields(TaxConfig)
    if f.name != "disc_rates"
)
"""The keyword arguments of ``PeriodicBracketTax``: every field but the derived ``disc_rates``."""


class PlannerTaxMasks:
    """The planner's rate masks per bracket sub-space, with the annealed rate limit."""

    def __init__(self, cfg: TaxConfig, bracket_keys: Sequence[str]) -> None:
        self.cfg = cfg
        self.sub_names = [f"TaxIndexBracket_{k}" for k in bracket_keys]
        self._last_completions = 0
        self.curr_rate_max = cfg.rate_max
        if cfg.tax_annealing_schedule is not None:
            self.curr_rate_max = float(
                annealed_tax_limit(0, *cfg.tax_annealing_schedule, cfg.rate_max)
            )
        self._cache: dict[tuple[bool, int], dict[str, np.ndarray]] = {}

    def update_completions(self, completions: int) -> None:
        """Move the annealed rate limit to ``completions`` finished episodes."""
        if self.cfg.tax_annealing_schedule is not None and completions != self._last_completions:
            self._last_completions = int(completions)
            self.curr_rate_max = float(
                annealed_tax_limit(completions, *self.cfg.tax_annealing_schedule, self.cfg.rate_max)
            )

    def clear_cache(self) -> None:
        """Recompute the masks at the next call (the episode count may have changed)."""
        self._cache = {}

    def masks(self, open_: bool, completions: int) -> dict[str, np.ndarray]:
        """``{sub_space: mask}``: ones (annealed) when ``open_``, else zeros."""
        key = (bool(open_), int(completions) if self.cfg.tax_annealing_schedule else 0)
        if key not in self._cache:
            rates = self.cfg.disc_rates
            if self.cfg.tax_annealing_schedule is None:
                allowed = np.ones(len(rates), dtype=np.float32)
            else:
                allowed = annealed_tax_mask(
                    completions, *self.cfg.tax_annealing_schedule, rates
                ).astype(np.float32)
            mask = allowed if open_ else np.zeros_like(allowed)
            self._cache[key] = {name: mask.copy() for name in self.sub_names}
        return self._cache[key]
