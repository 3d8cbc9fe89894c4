"""Income-tax brackets as plain arrays: cutoffs, bills, marginal rates and enactment.

The numpy reference of the bracket tax. ``PeriodicBracketTax`` (one env) and the batched
one-step economy (all envs at once) both call these functions, and a CUDA/Numba twin would
mirror them name for name. Incomes carry the agents on their **last** axis and rates the
brackets on theirs, so every function takes ``(n_agents,)``/``(n_brackets,)`` for one env or
``(num_envs, n_agents)``/``(num_envs, n_brackets)`` for a batch.

A bracket ``b`` covers incomes in ``[cutoff_b, cutoff_{b+1})`` (the top bracket is open) and
its rate applies to the part of the income inside it:
``tax(z) = sum_b rate_b * min(size_b, max(0, z - cutoff_b))``.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

TAX_MODELS = (
    "model_wrapper",
    "us-federal-single-filer-2018-scaled",
    "fixed-bracket-rates",
    "saez",
)
BRACKET_SPACINGS = ("us-federal", "linear", "log")
PARETO_WEIGHT_TYPES = ("inverse_income", "uniform")

#: 2018 US federal single-filer bracket cutoffs in dollars and their marginal rates.
US_FEDERAL_2018_CUTOFFS_USD = (0, 9700, 39475, 84200, 160725, 204100, 510300)
US_FEDERAL_2018_RATES = (0.10, 0.12, 0.22, 0.24, 0.32, 0.35, 0.37)


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; else ValueError with the close matches."""
    if isinstance(value, str) and value in choices:
        return value
    close = difflib.get_close_matches(str(value), choices, n=3, cutoff=0.4)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(f"Unknown {name} {value!r}.{hint} Expected one of {list(choices)}")


def make_bracket_cutoffs(
    bracket_spacing: str, n_brackets: int, top_bracket_cutoff: float, usd_scaling: float
) -> np.ndarray:
    """Bracket lower edges (first 0) for ``"us-federal"``, ``"linear"`` or ``"log"`` spacing.

    ``us-federal``: the 2018 cutoffs divided by ``usd_scaling`` (always 7 brackets);
    ``linear``: ``linspace(0, top, n)``; ``log``: ``[0] + 2^linspace(log2(top / 2^(n-2)),
    log2(top), n - 1)``.
    """
    spacing = check_choice("bracket_spacing", bracket_spacing, BRACKET_SPACINGS)
    if spacing == "us-federal":
        return np.array(US_FEDERAL_2018_CUTOFFS_USD, dtype=np.float64) / usd_scaling
    if spacing == "linear":
        return np.linspace(0, top_bracket_cutoff, n_brackets)
    b0_max = top_bracket_cutoff / (2 ** (n_brackets - 2))
    logs = np.linspace(np.log2(b0_max), np.log2(top_bracket_cutoff), n_brackets - 1)
    return np.concatenate([[0.0], 2**logs])


def check_bracket_cutoffs(cutoffs: Any) -> np.ndarray:
    """``cutoffs`` as a float array; ValueError unless 1-D, starting at 0, strictly increasing."""
    arr = np.asarray(cutoffs, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"bracket cutoffs must be a 1-D list of >= 2 values, got {cutoffs!r}")
    if arr[0] != 0:
        raise ValueError(f"the first bracket cutoff must be 0, got {arr[0]!r} in {arr.tolist()}")
    if np.any(np.diff(arr) <= 0) or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"bracket cutoffs must be finite and strictly increasing, got {arr.tolist()}"
        )
    return arr


def check_rates(name: str, rates: Any, n_brackets: int | None = None) -> np.ndarray:
    """``rates`` as a float array; ValueError if a rate is outside [0, 1] or the count is wrong."""
    if isinstance(rates, (str, bytes)) or not isinstance(rates, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a list of rates in [0, 1], got {rates!r}")
    arr = np.asarray(rates, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat list of rates, got shape {arr.shape}")
    if n_brackets is not None and arr.size != n_brackets:
        raise ValueError(f"{name} needs one rate per bracket ({n_brackets}), got {arr.size}")
    bad = (arr < 0) | (arr > 1) | ~np.isfinite(arr)
    if np.any(bad):
        raise ValueError(
            f"{name} must lie in [0, 1]; got {arr[bad].tolist()} at index {np.flatnonzero(bad).tolist()}"
        )
    return arr


def bracket_edges_and_sizes(cutoffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``edges`` = cutoffs + [inf] and ``sizes`` = their differences (the top one is inf)."""
    edges = np.concatenate([cutoffs, [np.inf]])
    return edges, edges[1:] - edges[:-1]


def discretized_rates(rate_min: float, rate_max: float, rate_disc: float) -> np.ndarray:
    """The planner's rate choices: ``arange(min, max + disc, disc)`` capped at ``max``."""
    rates = np.arange(rate_min, rate_max + rate_disc, rate_disc)
    return rates[rates <= rate_max]


def income_in_brackets(income: Any, cutoffs: np.ndarray) -> np.ndarray:
    """The part of each income inside each bracket: shape ``income.shape + (n_brackets,)``."""
    _, sizes = bracket_edges_and_sizes(cutoffs)
    past_cutoff = np.maximum(0.0, np.asarray(income, dtype=np.float64)[..., None] - cutoffs)
    return np.minimum(sizes, past_cutoff)


def taxes_due(income: Any, cutoffs: np.ndarray, rates: Any) -> np.ndarray:
    """Tax owed on ``income``: ``sum_b rate_b * income_in_bracket_b``.

    ``income`` (..., n_agents) with ``rates`` (..., n_brackets); a 1-D ``rates`` is shared.
    """
    rates = np.asarray(rates, dtype=np.float64)
    in_brackets = income_in_brackets(income, cutoffs)
    if in_brackets.ndim == 1:  # one scalar income
        return np.sum(rates * in_brackets, axis=-1)
    return np.sum(rates[..., None, :] * in_brackets, axis=-1)


def bracket_index(income: Any, cutoffs: np.ndarray) -> np.ndarray:
    """Index of the bracket each income falls in (negative incomes: bracket 0)."""
    income = np.asarray(income, dtype=np.float64)
    idx = np.searchsorted(cutoffs, income, side="right") - 1
    return np.maximum(idx, 0)


# An income counts as negative below -NEGATIVE_INCOME_ATOL coin, not below 0: moving coin
# between inventory and escrow leaves a rounding residue of about 1e-15 in ``coin - last_coin``,
# and its sign is no income (the original's marginal rate flipped to 0 on it;
# docs/differences.md). The CUDA C (``bracket_tax.cuh``) and Numba twins use the same value.
NEGATIVE_INCOME_ATOL = 1e-9


def period_income(coin_endowment: Any, last_coin: Any) -> np.ndarray:
    """``coin_endowment - last_coin``, with a rounding residue (``|income| <``
    ``NEGATIVE_INCOME_ATOL``) as exactly 0: what a tax day bills and records."""
    income = np.asarray(coin_endowment, dtype=np.float64) - np.asarray(last_coin, dtype=np.float64)
    return np.where(np.abs(income) < NEGATIVE_INCOME_ATOL, 0.0, income)


def marginal_rate(income: Any, cutoffs: np.ndarray, rates: Any) -> np.ndarray:
    """The rate on the next unit of ``income`` (0 for negative incomes, i.e. below
    ``-NEGATIVE_INCOME_ATOL``).

    ``income`` (..., n_agents) with ``rates`` (..., n_brackets); a 1-D ``rates`` is shared.
    """
    income = np.asarray(income, dtype=np.float64)
    rates = np.asarray(rates, dtype=np.float64)
    idx = bracket_index(income, cutoffs)
    if income.ndim == 0:
        rate = rates[idx]
    else:
        rates = np.broadcast_to(rates, income.shape[:-1] + rates.shape[-1:])
        rate = np.take_along_axis(rates, idx, axis=-1)
    return np.where(income < -NEGATIVE_INCOME_ATOL, 0.0, rate)


class TaxOutcome(NamedTuple):
    """What one tax day did, per agent (agents on the last axis) and per env."""

    income: np.ndarray  # total coin endowment minus the coin after the last tax day
    tax_paid: np.ndarray  # min(taxes due, coin in inventory): escrow is never taxed
    marginal_rate: np.ndarray
    effective_rate: np.ndarray  # tax_paid / max(1e-6, income)
    lump_sum: np.ndarray  # (...,): revenue / n_agents, paid to every agent
    inventory_coin: np.ndarray  # inventory coin after taxes and transfers
    last_coin: np.ndarray  # total coin endowment after taxes and transfers


def enact_taxes(
    inventory_coin: Any, escrow_coin: Any, last_coin: Any, cutoffs: np.ndarray, rates: Any
) -> TaxOutcome:
    """Collect income taxes and pay the revenue back as an equal lump sum.

    income = inventory + escrow - last_coin (``period_income``); tax paid =
    min(inventory, taxes_due(income)); every agent then receives revenue / n_agents. Revenue
    equals the transfers paid.
    """
    inventory = np.asarray(inventory_coin, dtype=np.float64)
    escrow = np.asarray(escrow_coin, dtype=np.float64)
    income = period_income(inventory + escrow, last_coin)
    paid = np.minimum(inventory, taxes_due(income, cutoffs, rates))
    lump_sum = paid.sum(axis=-1) / inventory.shape[-1]
    new_inventory = inventory - paid + lump_sum[..., None]
    return TaxOutcome(
        income=income,
        tax_paid=paid,
        marginal_rate=marginal_rate(income, cutoffs, rates),
        effective_rate=paid / np.maximum(1e-6, income),
        lump_sum=lump_sum,
        inventory_coin=new_inventory,
        last_coin=new_inventory + escrow,
    )
