"""The GPU economy's numpy reference (Build, ContinuousDoubleAuction, Gather,
PeriodicBracketTax) against the array economy (``array_economy.step``, itself equal to the
dict env), whole steps: phase 1 (the disabled tax), phase 2 (the planner's rates) and the
Saez model, through trades, expiries, tax days, an episode end and a reset. Given the same
draws (the economy's generators replay the reference's world draws and the Saez model's
``gpu_saez`` draws) every world, market and tax field, the rewards, done, the masks and the
whole observation vectors (``ArrayGatherTradeBuildBatch``'s) are equal bit for bit."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gtb_gpu_helpers import array_state_from
from test_gpu_market_world_reference import check_market, market_actions

from ai_economist import foundation
from ai_economist.foundation.components import cda_batched as cb
from ai_economist.foundation.scenarios.one_step_economy import gpu_saez
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_tax as tax
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
    ArrayGatherTradeBuildBatch,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import SCENARIO_NAME
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_reference as er
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_state as es
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_reference as tr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.economy_env import (
    PHASE1_CONFIG,
    PHASE2_CONFIG,
    GatherTradeBuildEconomyGpu,
)
from ai_economist.warp_drive.env_wrapper import EnvWrapper

WORLD_FIELDS = ("locs", "inventory", "escrow", "labor", "resource_maps", "house_owner",
                "coin_utility", "utility", "welfare", "completions", "auto_integrator")  # fmt: skip


def economy_config(base, episode_length=24, order_duration=6, period=5, **tax_kwargs):
    """A short-episode copy of a published config (a short tax period, short orders)."""
    config = copy.deepcopy(base)
    config.update(episode_length=episode_length, starting_agent_coin=30.0)
    for comp in config["components"]:
        ((name, kwargs),) = comp.items()
        if name == "ContinuousDoubleAuction":
            kwargs["order_duration"] = order_duration
        if name == "PeriodicBracketTax":
            kwargs.update(period=period, **tax_kwargs)
    return config


class ReplayDraws:
    """An env's generator in the array economy: ``permutation`` the reference's move order,
    ``random(n)`` the next ``n`` of its collection and regrowth uniforms (one or two calls),
    ``uniform`` the Saez model's draws (``gpu_saez.uniform_draws`` of the run's seed, the env
    and its draw counter, as ``tax_reference``)."""

    def __init__(self, seed: int, env: int) -> None:
        self.seed, self.env, self.count = seed, env, 0
        self.order, self.queue = None, np.zeros(0)

    def load(self, draws, e: int) -> None:
        self.order = draws.order[e]
        self.queue = np.concatenate([draws.gather_u[e][draws.events[e]], draws.regrow_u[e]])

    def permutation(self, n: int) -> np.ndarray:
        assert self.order is not None and self.order.size == n
        return self.order.copy()

    def random(self, n: int) -> np.ndarray:
        out, self.queue = self.queue[:n], self.queue[n:]
        assert out.size == n, (n, out.size)
        return out.copy()

    def uniform(self, low: float, high: float, size: int) -> np.ndarray:
        u = gpu_saez.uniform_draws(self.seed, self.env, self.count + np.arange(size))
        self.count += size
        return low + (high - low) * u


def economy_from(state, eparams: ae.EconomyParams, rngs) -> ae.EconomyState:
    """An array economy whose world equals the reference's, its market empty, its tax reset
    (its generators ``rngs``)."""
    world = array_state_from(state, eparams.world)
    world.rngs = rngs
    n, everyone = world.num_envs, np.ones(world.num_envs, dtype=bool)
    econ = ae.EconomyState(world=world, market=cb.initial_state(eparams.market, n),
                           tax=tax.initial_state(eparams.tax, n, eparams.world.n_agents, rngs),
                           rate_completions=np.zeros(n, np.int64),
                           mask_completions=np.zeros(n, np.int64))  # fmt: skip
    cb.reset_envs(econ.market, eparams.market, everyone)
    ae._reset_components(econ, eparams, everyone)
    return econ


def check_all(state, econ: ae.EconomyState, eparams: ae.EconomyParams, n_planner: int) -> None:
    """Every field, the masks and the whole vectors equal the array economy's."""
    for name in WORLD_FIELDS:
        np.testing.assert_array_equal(state[name], getattr(econ.world, name), err_msg=name)
    np.testing.assert_array_equal(state["_timestep_"], econ.world.timestep)
    check_market(state, econ.market)
    for key, name in tr._PAIRS:
        np.testing.assert_array_equal(state[name], getattr(econ.tax, key), err_msg=name)
    np.testing.assert_array_equal(state["tax_rate_completions"], econ.rate_completions)
    obs = aeo.observations(econ, eparams)
    np.testing.assert_array_equal(state["observations_a"], obs["agent_vectors"])
    planner = np.broadcast_to(
        obs["planner_vector"][:, None], (econ.num_envs, n_planner, obs["planner_vector"].shape[-1])
    )
    n_vec = planner.shape[-1]
    np.testing.assert_array_equal(state["observations_p"][..., :n_vec], planner)
    hot = state["observations_p"][..., n_vec:]  # the bracket one-hot (phase 2), or nothing
    assert hot.shape[-1] in (0, n_planner)
    if hot.shape[-1]:
        np.testing.assert_array_equal(hot, np.broadcast_to(np.eye(n_planner), hot.shape))
    np.testing.assert_array_equal(state["action_mask_a"], obs["agent_masks"])
    np.testing.assert_array_equal(state["action_mask_p"],
                                  obs["planner_masks"].reshape(state["action_mask_p"].shape))  # fmt: skip


def run_against_economy(config, num_envs=2, seed=3, steps=None, rng_seed=5, goods=0.0):
    """Step the reference and the array economy side by side (random allowed actions, the
    planner's random allowed picks), resetting every env at its episode's end; return the
    reference's state and counts of what happened. ``goods``: stone and wood every agent
    holds at the start (builds and sales from the first step)."""
    env = GatherTradeBuildEconomyGpu(config)
    econ_env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **config)
    eparams = ae.EconomyParams.from_env(econ_env)
    params, market, tx = env.params, env.market, env.tax
    state = er.initial_state(params, market, tx, num_envs, seed, env._static)
    if goods:
        state["inventory"][..., 1:] = goods
        er.observe(state, params, market, tx, env._static)
    rngs = [ReplayDraws(int(state["rng_seed"]), e) for e in range(num_envs)]
    econ = economy_from(state, eparams, rngs)
    rng = np.random.default_rng(rng_seed)
    counts = {
        "trades": 0,
        "tax_days": 0,
        "resets": 0,
        "picks": 0,
        "collected": 0.0,
        "max_rate": 0.0,
    }
    for _ in range(steps or 2 * env.episode_length):
        check_all(state, econ, eparams, env.n_planner)
        actions = market_actions(state["action_mask_a"], eparams.move_start, rng)
        pm = state["action_mask_p"]
        picks = (rng.random(pm.shape) * pm).argmax(-1)
        state["sampled_actions_a"][:], state["sampled_actions_p"][:] = actions, picks
        draws = er.economy_step(state, params, market, tx, env._static)
        for e, g in enumerate(rngs):
            g.load(draws, e)
        planner = picks if tx.planner_sets_rates else None
        agent_rew, planner_rew, done = ae.step(econ, eparams, actions, planner)
        np.testing.assert_array_equal(state["rewards_a"], agent_rew.astype(np.float32))
        np.testing.assert_array_equal(state["rewards_p"], np.broadcast_to(
            planner_rew.astype(np.float32)[:, None], state["rewards_p"].shape))  # fmt: skip
        np.testing.assert_array_equal(state["_done_"], done)
        check_all(state, econ, eparams, env.n_planner)
        counts["trades"] += int(state["n_trades"].sum())
        counts["tax_days"] += int((econ.tax.cycle_pos == 1).sum())
        counts["picks"] += int((picks > 0).sum()) if tx.planner_sets_rates else 0
        counts["max_rate"] = max(counts["max_rate"], float(state["tax_rates_obs"].max()))
        if done.any():
            counts["resets"] += int(done.sum())
            counts["collected"] += float(state["total_collected"][done].sum())
            state["_timestep_"][done], state["_done_"][done] = 0, 0
            er.reset_envs(state, params, market, tx, done, env._static)
            econ.world = array_state_from(state, eparams.world)  # the reference's world reset
            econ.world.rngs = rngs
            ae._reset_components(econ, eparams, done)  # then the market's and the tax's
    return state, counts


def test_phase2_planner_rates_equal_the_array_economy():
    state, counts = run_against_economy(economy_config(PHASE2_CONFIG))
    assert counts["resets"] == 4 and (state["completions"] == 2).all()
    assert counts["trades"] >= 3 and counts["tax_days"] >= 16 and counts["picks"] >= 20
    assert counts["collected"] > 0 and counts["max_rate"] > 0  # the planner's rates taxed


def test_phase1_disabled_tax_equals_the_array_economy():
    state, counts = run_against_economy(economy_config(PHASE1_CONFIG), steps=30)
    assert counts["resets"] == 2 and counts["tax_days"] >= 10
    assert not state["total_collected"].any() and not state["tax_rates_obs"].any()


def test_saez_equals_the_array_economy():
    config = economy_config(PHASE2_CONFIG, tax_model="saez")
    state, counts = run_against_economy(config, steps=30)
    assert counts["tax_days"] >= 10 and counts["collected"] > 0
    assert (state["saez_rates"] > 0).all() and state["saez_count"].min() > 0


def test_layout_and_specs_are_the_array_batchs():
    for config in (PHASE1_CONFIG, PHASE2_CONFIG):
        config = economy_config(config, episode_length=4)
        env, batch = GatherTradeBuildEconomyGpu(config), ArrayGatherTradeBuildBatch(config, 2)
        for tag, group in env.policies().items():
            spec = batch.policy_specs[tag]
            assert (group.num_agents, group.obs_dim, group.num_actions) == (
                spec.num_agents, spec.obs_dim, spec.num_actions)  # fmt: skip
            assert env.observation_layout(tag) == batch.observation_layout(tag), tag
            assert group.num_agents == len(batch.policy_tag_to_agent_id_map[tag])
        w = EnvWrapper(env, 2, "numpy", seed=0)
        w.reset_all_envs()
        for _ in range(env.episode_length):
            masks = w.action_masks("a").numpy()
            pm = w.action_masks("p").numpy()
            w.step_all_envs({"a": masks.argmax(-1), "p": (pm * np.arange(pm.shape[-1])).argmax(-1)})
        assert w.pull("_done_").all()


def test_declaration_of_the_economy():
    env = GatherTradeBuildEconomyGpu()
    d = env.dims()
    assert (d["n_planner"], d["n_actions_p"], d["n_actions_a"]) == (7, 22, 50)
    assert d["obs_dim_a"] == 9 + 112 + (7 + 4 + 4) + 9 * 11 * 11
    assert d["obs_dim_p"] == 68 + (7 + 3 + 4) + 4 + 6 * 4 + 7
    off = es.offsets(env.market, env.tax, 4)
    assert (off["tax_a"], off["tax_p"], off["tax_pa"], off["one_hot"]) == (115, 68, 86, 110)
    names = [f.name for f in env.state_fields()]
    assert names.index("n_trades") < names.index("tax_cycle_pos") < names.index("layout_maps")
    assert names.index("market_params") < names.index("tax_params")
    assert env.kernels().defines["OBS_TIME"] == 130 and env.threads_per_env == 32
    phase1 = GatherTradeBuildEconomyGpu(PHASE1_CONFIG)
    assert phase1.n_planner == 1 and phase1.dims()["obs_dim_p"] == 68 + 14 + 4 + 24


def test_configs_without_the_economys_components_are_named():
    config = copy.deepcopy(PHASE2_CONFIG)
    config["components"] = config["components"][:3]
    with pytest.raises(gs.UnsupportedGpuConfig, match="PeriodicBracketTax"):
        GatherTradeBuildEconomyGpu(config)
    config = copy.deepcopy(PHASE2_CONFIG)
    config["components"][3]["PeriodicBracketTax"]["period"] = 2_000_000
    with pytest.raises(gs.UnsupportedGpuConfig, match="period=2000000"):
        GatherTradeBuildEconomyGpu(config)


def test_saez_formula_equals_the_array_economy():
    # 5 agents taxed every step: the 500-sample buffer fills on step 100, the formula follows
    config = economy_config(PHASE2_CONFIG, episode_length=200, period=1, tax_model="saez",
                            tax_annealing_schedule=None)  # fmt: skip
    config.update(n_agents=5, fixed_four_skill_and_loc=False)
    state, counts = run_against_economy(config, num_envs=1, steps=106, goods=20.0)
    assert state["saez_reached"].all() and counts["resets"] == 0
    assert (state["total_collected"] > 0).all() and counts["trades"] > 0
    rates = state["saez_rates"][0]
    assert 0 < rates.min() < rates.max() < 1  # set by the formula (every step a first day)
