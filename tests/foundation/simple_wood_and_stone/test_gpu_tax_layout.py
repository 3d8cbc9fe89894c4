"""The GPU tax's blocks sit where the economy's vectors hold the tax: written at the offsets
of the ``PeriodicBracketTax-*`` keys, they equal the array economy's agent flat vectors and
planner vector (which equal the dict env's) there; the planner's masks are the economy's."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE2_ENV_CONFIG,
    env_config,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_reference as tr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_state as ts
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.tax_env import tax_params

TAX = "PeriodicBracketTax-"


def phase2(period: int = 4) -> dict:
    config = env_config(PHASE2_ENV_CONFIG)
    config = copy.deepcopy(config)
    for comp in config["components"]:
        if "PeriodicBracketTax" in comp:
            comp["PeriodicBracketTax"]["period"] = period
    config.update(episode_length=30, dense_log_frequency=None, starting_agent_coin=30.0)
    return config


def offset_of(fields: dict, prefix: str) -> tuple[int, list[str]]:
    """Where the keys starting with ``prefix`` start in the sorted flat vector (one block)."""
    keys = sorted(fields)
    ours = [k for k in keys if k.startswith(prefix)]
    first = keys.index(ours[0])
    assert keys[first : first + len(ours)] == ours  # contiguous
    return sum(fields[k].shape[-1] for k in keys[:first]), ours


def test_tax_blocks_and_masks_equal_the_economys():
    from ai_economist import foundation

    config = phase2()
    params = ae.EconomyParams.from_env(
        foundation.make_env_instance("layout_from_file/simple_wood_and_stone", seed=0, **config)
    )
    ours = tax_params(config)
    for key, value in dataclasses.asdict(params.tax).items():
        assert np.array_equal(getattr(ours, key), value), key
    state = ae.initial_state(params, [0, 1])
    rng = np.random.default_rng(5)
    b = params.tax.n_brackets
    for _ in range(9):  # two tax days, the planner's picks on three first days
        masks = aeo.agent_masks(state, params)
        actions = (rng.random(masks.shape) * masks).argmax(-1)
        pm = aeo.planner_masks(state, params).reshape(2, b, -1)
        picks = (rng.random(pm.shape) * pm).argmax(-1)
        ae.step(state, params, actions, picks)
    assert (state.tax.rate_index > 0).any() and (state.tax.last_income != 0).any()
    obs = aeo.observations(state, params)
    fields = aeo.agent_fields(state, params)
    off_a, keys_a = offset_of(fields, TAX)
    assert [k[len(TAX) :] for k in keys_a] == list(ts.AGENT_FIELDS)
    planner = aeo.planner_fields(state, params)
    off_p, keys_p = offset_of(planner, TAX)
    assert [k[len(TAX) :] for k in keys_p] == list(ts.PLANNER_FIELDS)
    per_agent = aeo.planner_agent_fields(state, params)
    off_pa, keys_pa = offset_of(per_agent, TAX)
    assert [k[len(TAX) :] for k in keys_pa] == list(ts.PLANNER_AGENT_FIELDS)
    n_flat_p = obs["planner_flat"].shape[-1]
    stride = obs["planner_agents"].shape[-1]
    t = state.tax
    declared = {
        "tax_cycle_pos": t.cycle_pos.astype(np.int32), "tax_rate_index": t.rate_index.astype(np.int32),
        "tax_rates_obs": t.rates_obs, "tax_rate_completions": state.rate_completions.astype(np.int32),
        "last_coin": t.last_coin, "last_income": t.last_income,
        "last_marginal_rate": t.last_marginal_rate, "total_collected": t.total_collected,
        "last_lump_sum": t.last_lump_sum, "saez_rates": t.saez_rates,
        "inventory": state.world.inventory, "escrow": state.world.escrow,
        "observations_a": np.zeros(obs["agent_flat"].shape, np.float32),
        "observations_p": np.zeros((2, b, obs["planner_vector"].shape[-1]), np.float32),
        **ts.constant_values(params.tax, off_a, off_p, n_flat_p + off_pa, stride),
    }  # fmt: skip
    tr.observe_tax(declared, params.tax, slice(None))
    size_a = ts.agent_obs_size(params.tax, params.world.n_agents)
    np.testing.assert_array_equal(declared["observations_a"][..., off_a : off_a + size_a],
                                  obs["agent_flat"][..., off_a : off_a + size_a])  # fmt: skip
    size_p = ts.planner_obs_size(params.tax, params.world.n_agents)
    ours, theirs = declared["observations_p"], obs["planner_vector"][:, None]
    np.testing.assert_array_equal(ours[..., off_p : off_p + size_p],
                                  np.broadcast_to(theirs[..., off_p : off_p + size_p],
                                                  ours[..., off_p : off_p + size_p].shape))  # fmt: skip
    for i in range(params.world.n_agents):
        lo = n_flat_p + off_pa + i * stride
        np.testing.assert_array_equal(ours[..., lo : lo + 3],
                                      np.broadcast_to(theirs[..., lo : lo + 3], (2, b, 3)))  # fmt: skip
    np.testing.assert_array_equal(
        tr.planner_masks(declared, params.tax, state.mask_completions),
        obs["planner_masks"].reshape(2, b, -1),
    )


def test_a_config_without_the_tax_is_named():
    from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import PHASE1_ENV_CONFIG
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.state import (
        UnsupportedGpuConfig,
    )

    config = env_config(PHASE1_ENV_CONFIG, without_tax=True)
    with pytest.raises(UnsupportedGpuConfig, match="has no PeriodicBracketTax"):
        tax_params(config)
