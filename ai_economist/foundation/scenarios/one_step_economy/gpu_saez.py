"""The Saez tax model of ``PeriodicBracketTax`` for all environments at once (numpy reference).

Each environment keeps what the dict-API component keeps (``saez_tax.SaezTaxMixin``): a
buffer of the last 500 ``[income, marginal rate]`` samples (a ring here, oldest overwritten),
whether it has filled once, the smoothed elasticity estimate and ``log z0``, the running
average of the rates. On a period's first day an environment sets its rates: uniform random
rates in ``[rate_min, rate_max]`` until the buffer has filled, then the Saez formula over the
buffer (the functions of :mod:`saez`, applied per environment: elasticity estimate, binned
welfare weights and Pareto parameters, binned rates, bracket averages). On a tax day it adds
every worker's income and marginal rate to its buffer.

The random rates come from a counter-based hash (:func:`uniform_draws`) of the run's seed, the
environment index and a per-env draw counter, so numpy, CUDA C and Numba draw the same numbers.
The kernels mirror the functions here and in :mod:`saez` name for name.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.components import saez
from ai_economist.foundation.components.saez_tax import SAEZ_BUFFER_SIZE, SAEZ_N_ESTIMATION_BINS
from ai_economist.warp_drive.state import StateField

MASK32 = 0xFFFFFFFF
PARETO_WEIGHT_CODES = {"inverse_income": 0, "uniform": 1}


@dataclasses.dataclass(frozen=True)
class SaezParams:
    """Constants of the Saez model (read from the dict-API component)."""

    rate_min: float
    rate_max: float
    pareto_weight_type: str
    fixed_elas: float | None
    bin_edges: np.ndarray  # (101,) linspace(0, top cutoff, 101)
    bin_sizes: np.ndarray  # (101,) their widths, the last one inf
    cutoffs: np.ndarray  # (B,)
    bracket_sizes: np.ndarray  # (B,) the last one inf

    @classmethod
    def from_component(cls, tax: Any) -> SaezParams:
        """From a ``PeriodicBracketTax`` component."""
        return cls(
            rate_min=float(tax.rate_min),
            rate_max=float(tax.rate_max),
            pareto_weight_type=tax.pareto_weight_type,
            fixed_elas=tax._saez_fixed_elas,
            bin_edges=np.array(tax._saez_income_bin_edges, dtype=np.float64),
            bin_sizes=np.array(tax._saez_income_bin_sizes, dtype=np.float64),
            cutoffs=np.array(tax.bracket_cutoffs, dtype=np.float64),
            bracket_sizes=np.array(tax.bracket_sizes, dtype=np.float64),
        )


def saez_fields() -> list[StateField]:
    """The per-env Saez state (reset ``"none"``: it lives across episodes) and constants.
    Without the Saez model the buffer has one row (nothing to hold)."""
    f64, i32 = np.float64, np.int32

    def keep(name: str, dtype: Any, shape: tuple = (), doc: str = "") -> StateField:
        return StateField(name, dtype, shape, reset="none", doc=doc)

    def const(name: str, dtype: Any, shape: tuple = (), doc: str = "") -> StateField:
        return StateField(name, dtype, shape, per_env=False, doc=doc)

    return [
        keep("saez_buffer", f64, ("saez_buffer_size", 2), "[income, marginal rate] ring"),
        keep("saez_count", i32, doc="samples held (at most the buffer size)"),
        keep("saez_next", i32, doc="ring index of the next sample"),
        keep("saez_reached", i32, doc="1 once the buffer has filled"),
        keep("saez_draws", i32, doc="uniform draws taken (the hash counter)"),
        keep("saez_elas", f64, doc="the smoothed elasticity estimate (elas_t)"),
        keep("saez_log_z0", f64, doc="log z0 of the estimate"),
        keep("saez_rates", f64, ("n_brackets",), "this period's rates"),
        keep("saez_running_avg", f64, ("n_brackets",), "running average of the rates"),
        const("saez_bin_edges", f64, ("saez_bins + 1",)),
        const("saez_bin_sizes", f64, ("saez_bins + 1",)),
        const("bracket_sizes", f64, ("n_brackets",)),
        const("rate_min", f64),
        const("rate_max", f64),
        const("pareto_weight_code", i32, doc=str(PARETO_WEIGHT_CODES)),
        const("saez_fixed_elas", f64, doc="the fixed elasticity, or -1 (use the estimate)"),
        const("rng_seed", i32, doc="seed of the uniform draws"),
    ]


def saez_dims(saez_on: bool) -> dict[str, int]:
    """``saez_buffer_size`` (500 with the Saez model, else 1) and ``saez_bins``."""
    return {
        "saez_buffer_size": SAEZ_BUFFER_SIZE if saez_on else 1,
        "saez_bins": SAEZ_N_ESTIMATION_BINS,
    }


def saez_initial(sp: SaezParams | None, n_brackets: int, seed: int | None) -> dict[str, Any]:
    """One environment's start values and the constants (zeros without the Saez model)."""
    bins = SAEZ_N_ESTIMATION_BINS + 1
    return {
        "saez_elas": np.float64(0.5),
        "saez_bin_edges": sp.bin_edges if sp else np.zeros(bins),
        "saez_bin_sizes": sp.bin_sizes if sp else np.zeros(bins),
        "bracket_sizes": sp.bracket_sizes if sp else np.zeros(n_brackets),
        "rate_min": np.float64(sp.rate_min if sp else 0.0),
        "rate_max": np.float64(sp.rate_max if sp else 1.0),
        "pareto_weight_code": np.int32(PARETO_WEIGHT_CODES[sp.pareto_weight_type] if sp else 0),
        "saez_fixed_elas": np.float64(-1.0 if sp is None or sp.fixed_elas is None else sp.fixed_elas),
        "rng_seed": np.int32((seed or 0) & 0x7FFFFFFF),
    }  # fmt: skip


# ------------------------------------------------------------------ the random draws
def mul32(a: Any, b: Any) -> Any:
    """``a * b mod 2**32`` for ints in ``[0, 2**32)`` without a 64-bit overflow."""
    return ((a & 0xFFFF) * b + (((a >> 16) * (b & 0xFFFF)) & 0xFFFF) * 65536) & MASK32


def mix32(x: Any) -> Any:
    """A 32-bit integer hash (xor-shift-multiply, "lowbias32")."""
    x = x ^ (x >> 16)
    x = mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def uniform_draws(seed: int, env: Any, counter: Any) -> np.ndarray:
    """Floats in ``[0, 1)`` (multiples of 2**-24): a hash of (seed, env, counter)."""
    env = np.asarray(env, dtype=np.int64)
    counter = np.asarray(counter, dtype=np.int64)
    x = mix32((counter & MASK32) ^ 0x9E3779B9)
    x = mix32(x ^ (env & MASK32))
    x = mix32(x ^ (np.int64(seed) & MASK32))
    return (x >> 8).astype(np.float64) * (1.0 / 16777216.0)


# ------------------------------------------------------------------ the model
def chronological_buffer(buffer: np.ndarray, count: int, nxt: int) -> np.ndarray:
    """The ring's samples oldest first (the dict component's list)."""
    if count < buffer.shape[0]:
        return buffer[:count]
    return np.concatenate([buffer[nxt:], buffer[:nxt]])


def saez_formula_rates(state: dict, sp: SaezParams, e: int) -> np.ndarray:
    """Env ``e``'s rates from the Saez formula over its buffer (updates its estimate and its
    running average): ``compute_and_set_new_period_rates_from_saez_formula``."""
    samples = chronological_buffer(
        state["saez_buffer"][e], int(state["saez_count"][e]), int(state["saez_next"][e])
    )
    elas_t, log_z0 = saez.estimate_uniform_income_elasticity(
        samples, 0.98, float(state["saez_elas"][e]), float(state["saez_log_z0"][e])
    )
    state["saez_elas"][e], state["saez_log_z0"][e] = elas_t, log_z0
    elas = sp.fixed_elas if sp.fixed_elas is not None else elas_t
    incomes = samples[:, 0]
    gzs = saez.binned_welfare_weights(incomes, sp.bin_edges, sp.pareto_weight_type)
    azs = saez.binned_pareto_params(incomes, sp.bin_edges)
    taus = saez.saez_marginal_rates(gzs, azs, elas)
    rates = saez.bracketize_schedule(taus, sp.bin_edges, sp.bin_sizes, sp.cutoffs, sp.bracket_sizes)
    rates = np.clip(rates, sp.rate_min, sp.rate_max)
    state["saez_running_avg"][e] = 0.99 * state["saez_running_avg"][e] + 0.01 * rates
    return rates


def saez_first_day(state: dict, sp: SaezParams, first_day: np.ndarray, seed: int) -> None:
    """On the envs where ``first_day``: this period's rates into ``saez_rates``."""
    n_brackets = state["saez_rates"].shape[1]
    for e in np.flatnonzero(first_day):
        if not state["saez_reached"][e] and state["saez_count"][e] >= state["saez_buffer"].shape[1]:
            state["saez_reached"][e] = 1
        if state["saez_reached"][e]:
            state["saez_rates"][e] = saez_formula_rates(state, sp, int(e))
            continue
        draws = int(state["saez_draws"][e])
        u = uniform_draws(seed, e, draws + np.arange(n_brackets))
        state["saez_rates"][e] = sp.rate_min + (sp.rate_max - sp.rate_min) * u
        state["saez_draws"][e] = draws + n_brackets


def saez_record(state: dict, tax_day: np.ndarray) -> None:
    """On the envs where ``tax_day``: every worker's income and marginal rate into the ring."""
    size = state["saez_buffer"].shape[1]
    n = state["last_income"].shape[1]
    for e in np.flatnonzero(tax_day):
        slots = (int(state["saez_next"][e]) + np.arange(n)) % size
        state["saez_buffer"][e, slots, 0] = state["last_income"][e]
        state["saez_buffer"][e, slots, 1] = state["last_marginal_rate"][e]
        state["saez_next"][e] = (int(state["saez_next"][e]) + n) % size
        state["saez_count"][e] = min(int(state["saez_count"][e]) + n, size)
