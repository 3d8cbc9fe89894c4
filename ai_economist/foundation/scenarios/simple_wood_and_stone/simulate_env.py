"""Gather-trade-build runs of ``ai-economist-simulate``: the env config of a run group and the
scripted baseline agents (shared by :mod:`.simulate` and :mod:`.simulate_checkpoints`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.utils import held_tax_limit_schedule
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import PHASE2_ENV_CONFIG
from ai_economist.simulate.economies import EconomyChunk, rate_columns

RATE_COLUMNS = rate_columns(c / 1000 for c in tb.US_FEDERAL_2018_CUTOFFS_USD)
"""One ``rate_<bracket>`` outcome column per US-federal bracket."""


def env_config(group: dict[str, Any], policy, tax_limit: float | None = None) -> dict[str, Any]:
    """The scenario kwargs of a run group under a tax policy (a :class:`Choice`), without tax
    annealing or, given ``tax_limit`` (a share of the rate range), with the rates held below
    it (a checkpoint's planner: the limit its training ended with)."""
    config = {k: v for k, v in PHASE2_ENV_CONFIG.items() if k != "components"}
    config.update(
        isoelastic_eta=float(group["isoelastic_eta"]),
        energy_cost=float(group["energy_cost"]),
        episode_length=int(group["episode_length"]),
    )
    components = []
    for entry in PHASE2_ENV_CONFIG["components"]:
        ((name, kwargs),) = entry.items()
        kwargs = dict(kwargs)
        if name == "Build":
            kwargs["payment_max_skill_multiplier"] = float(group["skill_multiplier"])
        if name == "PeriodicBracketTax":
            held = None if tax_limit is None else held_tax_limit_schedule(tax_limit)
            kwargs.update(period=int(group["tax_period"]), tax_annealing_schedule=held)
            if policy.kind == "saez":
                kwargs["tax_model"] = "saez"
            elif policy.kind == "checkpoint":
                kwargs["tax_model"] = "model_wrapper"  # the planner sets the rates
            else:
                kwargs.update(
                    tax_model="fixed-bracket-rates", fixed_bracket_rates=list(policy.rates)
                )
        components.append({name: kwargs})
    config["components"] = components
    return config


def random_actions(masks: np.ndarray, generators: list[np.random.Generator]) -> np.ndarray:
    """(E, A) a uniform draw among each agent's allowed actions (mask (E, A, n) > 0)."""
    draws = np.stack([g.random(masks.shape[1:]) for g in generators])
    return np.argmax(np.where(masks > 0, draws, -1.0), axis=-1).astype(np.int64)


def builder_actions(
    masks: np.ndarray, generators: list[np.random.Generator], move_start: int
) -> np.ndarray:
    """(E, A): build (action 1) where allowed, else a uniform draw among the allowed moves
    (NO-OP when none is)."""
    moves = masks[..., move_start:]
    draws = np.stack([g.random(moves.shape[1:]) for g in generators])
    move = move_start + np.argmax(np.where(moves > 0, draws, -1.0), axis=-1)
    move = np.where((moves > 0).any(axis=-1), move, 0)
    return np.where(masks[..., 1] > 0, 1, move).astype(np.int64)


def baseline_actions(
    chunk: EconomyChunk, state: ae.EconomyState, params: ae.EconomyParams, generators: list
) -> np.ndarray:
    """(E, A) the baseline agents' actions (``builder`` or ``random``) in ``state``."""
    masks = aeo.agent_masks(state, params)
    if chunk.agents.kind == "builder":
        return builder_actions(masks, generators, params.move_start)
    return random_actions(masks, generators)
