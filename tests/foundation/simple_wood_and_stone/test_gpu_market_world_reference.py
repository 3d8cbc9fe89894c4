"""The GPU world with the market (numpy reference) against the array economy.

The array economy (``array_economy``) always holds ``PeriodicBracketTax``; the GPU world with
the market has no tax yet. The comparison runs the economy with phase 1's *disabled* tax
(its rates are zero, so its tax days move no coin: ``income - 0`` back as ``0`` lump sums;
a short period puts tax days inside the run) and compares every world and market field, the
rewards, the masks and every observation key except the tax's (``PeriodicBracketTax-*``,
which the GPU world does not write): exact, given the same draws (the economy's generators
replay the reference's, as the world's tests do)."""

from __future__ import annotations

import numpy as np
import pytest
from gtb_gpu_helpers import array_state_from, replay

from ai_economist import foundation
from ai_economist.foundation.components import cda_batched as cb
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_tax as tax
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_reference as mr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import reference
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    MARKET_WORLD_CONFIG,
    GatherTradeBuildMarketWorldGpu,
    GatherTradeBuildWorldGpu,
)
from ai_economist.warp_drive.env_wrapper import EnvWrapper

TAX = "PeriodicBracketTax-"


def configs(episode_length=40, order_duration=6, period=10):
    """(economy config with the disabled tax, the same config without the tax)."""
    econ = env_config(PHASE1_ENV_CONFIG)
    econ.update(episode_length=episode_length, dense_log_frequency=None, starting_agent_coin=30.0)
    for comp in econ["components"]:
        ((name, kwargs),) = comp.items()
        if name == "ContinuousDoubleAuction":
            kwargs["order_duration"] = order_duration
        if name == "PeriodicBracketTax":
            assert kwargs["disable_taxes"]
            kwargs["period"] = period
    gpu = {**econ, "components": [c for c in econ["components"] if TAX[:-1] not in c]}
    return econ, gpu


def economy_from(state, eparams: ae.EconomyParams) -> ae.EconomyState:
    """An economy whose world equals the reference's (replaying generators), empty market,
    the tax reset."""
    world = array_state_from(state, eparams.world)
    n, everyone = world.num_envs, np.ones(world.num_envs, dtype=bool)
    es = ae.EconomyState(world=world, market=cb.initial_state(eparams.market, n),
                         tax=tax.initial_state(eparams.tax, n, eparams.world.n_agents),
                         rate_completions=np.zeros(n, np.int64),
                         mask_completions=np.zeros(n, np.int64))  # fmt: skip
    cb.reset_envs(es.market, eparams.market, everyone)
    tax.reset_envs(es.tax, eparams.tax, everyone, ae.coin_endowment(es), es.rate_completions)
    es.mask_completions[:] = world.completions
    return es


def market_actions(masks, move_start, rng):
    """A random allowed action per agent, mostly orders when any is allowed, builds when
    allowed; now and then a refused one (a no-op)."""
    market = masks.copy()
    market[..., :2] = 0
    market[..., move_start:] = 0
    use_market = market.any(-1, keepdims=True) & (rng.random(masks.shape[:2] + (1,)) < 0.5)
    actions = (rng.random(masks.shape) * np.where(use_market, market, masks)).argmax(-1)
    actions = np.where((masks[..., 1] > 0) & (rng.random(masks.shape[:2]) < 0.7), 1, actions)
    refused = rng.random(masks.shape[:2]) < 0.05
    return np.where(refused, rng.integers(0, masks.shape[-1], masks.shape[:2]), actions)


def old_orders(state, duration: int) -> int:
    """Open orders that expire at the end of the coming step unless they trade in it."""
    age = state["market_clock"][:, None, None, None] + 1
    return sum(int(((state[f"{side}_price"] >= 0) & (age - state[f"{side}_created"] > duration)).sum())
               for side in ("bid", "ask"))  # fmt: skip


def check_market(state, market: cb.MarketState) -> None:
    for name in mr.SLOT_FIELDS:
        np.testing.assert_array_equal(state[name], getattr(market, name), err_msg=name)
    np.testing.assert_array_equal(state["market_clock"], market.step)
    np.testing.assert_array_equal(state["books"], market.books)
    np.testing.assert_array_equal(state["price_history"], market.history)
    np.testing.assert_array_equal(state["trade_count"], market.trade_count)
    np.testing.assert_array_equal(state["trade_value"], market.trade_value)
    np.testing.assert_array_equal(state["n_trades"], market.trades.count)


def check_observations(state, es, eparams, off_p) -> None:
    fields = {k: v for k, v in aeo.agent_fields(es, eparams).items() if not k.startswith(TAX)}
    flat = aeo.flatten(fields)
    obs = state["observations_a"]
    np.testing.assert_array_equal(obs[..., : flat.shape[-1]], flat)
    maps, idx_maps = array_obs.egocentric_maps(es.world, eparams.world)
    rest = np.concatenate([maps.reshape(*maps.shape[:2], -1),
                           idx_maps.reshape(*maps.shape[:2], -1)], axis=-1)  # fmt: skip
    np.testing.assert_array_equal(obs[..., flat.shape[-1] :], rest)
    planner = {k: v for k, v in aeo.planner_fields(es, eparams).items() if not k.startswith(TAX)}
    agents = {k: v for k, v in aeo.planner_agent_fields(es, eparams).items()
              if not k.startswith(TAX)}  # fmt: skip
    expected = np.concatenate([aeo.flatten(planner),
                               aeo.flatten(agents).reshape(es.num_envs, -1)], axis=-1)  # fmt: skip
    np.testing.assert_array_equal(state["observations_p"][:, 0], expected)
    assert off_p == 0


def run_against_economy(num_envs, seed, rng, **kw):
    econ_config, gpu_config = configs(**kw)
    env = GatherTradeBuildMarketWorldGpu(gpu_config)
    econ = foundation.make_env_instance(SCENARIO_NAME, seed=0, **econ_config)
    eparams = ae.EconomyParams.from_env(econ)
    assert eparams.market == env.market and eparams.move_start == gs.move_start(env.market)
    params, market = env.params, env.market
    state = reference.initial_state(params, num_envs, seed, env._static, market)
    es = economy_from(state, eparams)
    counts = {"trades": 0, "expired": 0, "builds": 0, "tax_days": 0}
    for _ in range(env.episode_length):
        check_observations(state, es, eparams, gs.market_obs_offsets()[1])
        masks = aeo.agent_masks(es, eparams)
        np.testing.assert_array_equal(state["action_mask_a"], masks)
        actions = market_actions(masks, eparams.move_start, rng)
        state["sampled_actions_a"][:] = actions
        old = old_orders(state, market.order_duration)
        draws = reference.world_step(state, params, env._static, market)
        replay(es.world, draws)
        agent_rew, planner_rew, done = ae.step(es, eparams, actions)
        counts["tax_days"] += int((es.tax.cycle_pos == 1).sum())  # a tax day just passed
        w = es.world
        for name in ("locs", "inventory", "escrow", "labor", "resource_maps", "house_owner",
                     "coin_utility", "utility", "welfare", "completions", "auto_integrator"):  # fmt: skip
            np.testing.assert_array_equal(state[name], getattr(w, name), err_msg=name)
        np.testing.assert_array_equal(state["_timestep_"], w.timestep)
        check_market(state, es.market)
        np.testing.assert_array_equal(state["rewards_a"], agent_rew.astype(np.float32))
        np.testing.assert_array_equal(state["rewards_p"][:, 0], planner_rew.astype(np.float32))
        np.testing.assert_array_equal(state["_done_"], done)
        n_trades = int(state["n_trades"].sum())
        counts["trades"] += n_trades
        counts["expired"] += max(0, old - 2 * n_trades)  # a trade takes at most two of them
        counts["builds"] += int((actions == 1).sum())
    check_observations(state, es, eparams, 0)
    return state, counts


def test_market_world_equals_the_economy_with_a_disabled_tax():
    state, counts = run_against_economy(3, 0, np.random.default_rng(5))
    assert state["_done_"].all() and (state["completions"] == 1).all()
    assert counts["trades"] >= 5 and counts["expired"] >= 5 and counts["tax_days"] >= 9
    assert (state["escrow"] > 0).any() and (state["trade_count"] > 0).any()


def test_declaration_of_the_market_world():
    env = GatherTradeBuildMarketWorldGpu()
    d, market = env.dims(), env.market
    assert market.max_bid_ask == 10 and d["n_actions_a"] == 50 == 2 + 44 + 4
    assert gs.move_start(market) == 46 and gs.move_start(None) == 2
    assert d["obs_dim_a"] == 9 + 2 * (5 * 11 + 1) + 9 * 11 * 11
    assert d["obs_dim_p"] == 2 * (3 * 11 + 1) + 4 + 3 * 4
    defines = env.kernels().defines
    assert defines["OBS_BUILD_BUILD_SKILL"] == 1 and defines["OBS_GATHER_BONUS_GATHER_PROB"] == 114
    assert defines["OBS_FLAT_A"] == 121 and defines["OBS_P_TIME"] == 68
    iparams = reference.market_constants(market)["market_iparams"]
    assert defines["MOVE_START"] == 46 and iparams[defines["MI_OBS_OFFSET_A"]] == 2
    assert iparams[defines["MI_ACTION_OFFSET"]] == 2 and iparams[defines["MI_OBS_OFFSET_P"]] == 0
    names = [f.name for f in env.state_fields()]
    assert names.index("market_clock") < names.index("layout_maps") < names.index("market_params")
    assert MARKET_WORLD_CONFIG["components"][1].keys() == {"ContinuousDoubleAuction"}


def test_the_two_worlds_refuse_each_others_configs():
    with pytest.raises(gs.UnsupportedGpuConfig, match="GatherTradeBuildMarketWorldGpu"):
        GatherTradeBuildWorldGpu(MARKET_WORLD_CONFIG)
    with pytest.raises(gs.UnsupportedGpuConfig, match="has no ContinuousDoubleAuction"):
        GatherTradeBuildMarketWorldGpu(GatherTradeBuildWorldGpu().env_config)
    config = {
        **MARKET_WORLD_CONFIG,
        "components": [dict(c) for c in MARKET_WORLD_CONFIG["components"]],
    }
    config["components"][1] = {"ContinuousDoubleAuction": {"max_num_orders": 80}}
    with pytest.raises(gs.UnsupportedGpuConfig, match="max_num_orders=80"):
        GatherTradeBuildMarketWorldGpu(config)


def test_the_market_worlds_reset_is_the_worlds_with_an_empty_market():
    _, gpu_config = configs(episode_length=6, order_duration=50)
    world_config = {**gpu_config, "components": [c for c in gpu_config["components"]
                                                 if "ContinuousDoubleAuction" not in c]}  # fmt: skip
    env, world = GatherTradeBuildMarketWorldGpu(gpu_config), GatherTradeBuildWorldGpu(world_config)
    w, v = EnvWrapper(env, 3, "numpy", seed=4), EnvWrapper(world, 3, "numpy", seed=4)
    for x in (w, v):
        x.reset_all_envs()
    rng, noop = np.random.default_rng(0), np.zeros((3, 1), np.int32)
    for _ in range(env.episode_length):  # orders of 50 steps stay open to the episode's end
        masks = w.action_masks("a").numpy()
        w.step_all_envs({"a": market_actions(masks, gs.move_start(env.market), rng), "p": noop})
    assert w.pull("_done_").all() and w.pull("n_orders").sum() > 0 and w.pull("escrow").sum() > 0
    w.reset_only_done_envs()
    for _ in range(world.episode_length):
        v.step_all_envs({"a": np.zeros((3, 4), np.int32), "p": noop})
    v.reset_only_done_envs()  # episode 1 of the same seeds: the same draws
    for name in ("locs", "inventory", "escrow", "labor", "build_payment", "build_skill",
                 "resource_maps", "house_owner", "completions"):  # fmt: skip
        np.testing.assert_array_equal(w.pull(name), v.pull(name), err_msg=name)
    for name in ("n_orders", "books", "price_history", "trade_count", "market_clock"):
        assert not w.pull(name).any(), name
    assert (w.pull("bid_price") == -1).all() and (w.pull("ask_price") == -1).all()
    obs, off = w.pull("observations_a"), gs.market_obs_offsets()[0]
    size = gs.market_sizes(env.market)[0]
    np.testing.assert_array_equal(np.delete(obs, np.s_[off : off + size], axis=-1),
                                  v.pull("observations_a"))  # fmt: skip
