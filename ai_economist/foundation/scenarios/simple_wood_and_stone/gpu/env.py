"""``GatherTradeBuildWorldGpu``: gather-trade-build's world (Build, Gather, regrowth) as a
``GpuEnvironment``: one block per env, agents as threads, every array on the device, resets
on the device (``gtb_world_reset``), stepped by ``gtb_world_step``.

The config is a ``layout_from_file/simple_wood_and_stone`` env config (as in the run
configs); :data:`WORLD_CONFIG` is the paper's (4 agents + planner, 25x25 quadrant map,
1,000-step episodes, fixed four skills and corners, phase 1's labour-cost annealing) without
the market and the tax. ``GatherTradeBuildMarketWorldGpu`` is the same world with the
market (``ContinuousDoubleAuction`` between Build and Gather, :data:`MARKET_WORLD_CONFIG`: the
paper's config without the tax), stepped by ``gtb_market_world_step``; the full economy with
the tax is :class:`~.economy_env.GatherTradeBuildEconomyGpu`. Env ``e`` is seeded ``seed + e``; every draw is keyed by that
seed and the env's episode count (:mod:`.rng`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist import foundation
from ai_economist.foundation.components.cda_batched import MarketParams
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import reference
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.utils import rewards as social_rewards
from ai_economist.foundation.scenarios.utils import social_metrics
from ai_economist.warp_drive.obs_layout import ObsSegment
from ai_economist.warp_drive.scenario import GpuEnvironment, KernelSpec, PolicyGroup
from ai_economist.warp_drive.state import StateField

HERE = Path(__file__).resolve().parent
STEP_KERNEL, RESET_KERNEL = "gtb_world_step", "gtb_world_reset"
NUMBA_MODULE = "ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_world_numba"
WORLD_CONFIG: dict[str, Any] = {
    **env_config(PHASE1_ENV_CONFIG, without_tax=True),
    "components": [
        c for c in env_config(PHASE1_ENV_CONFIG)["components"] if {"Build", "Gather"} & set(c)
    ],
    "dense_log_frequency": None,
}
# The paper's phase-1 config without PeriodicBracketTax: Build, ContinuousDoubleAuction, Gather.
MARKET_WORLD_CONFIG: dict[str, Any] = {
    **env_config(PHASE1_ENV_CONFIG, without_tax=True),
    "dense_log_frequency": None,
}
MARKET_STEP_KERNEL, MARKET_RESET_KERNEL = "gtb_market_world_step", "gtb_market_world_reset"
MARKET_NUMBA_MODULE = NUMBA_MODULE.replace("gtb_world_numba", "gtb_market_world_numba")
# Doubles that go through log / exp / pow (the skill draws, the coin utility) may differ in
# the last bits between numpy, CUDA's libdevice and Python's math; their float32 images by
# one float32 step. Integer fields must match exactly.
DOUBLE_TOL = (1e-12, 1e-12)
FLOAT_TOL = (1e-6, 1e-6)
TOLERANCES = {
    **{n: DOUBLE_TOL for n in ("inventory", "build_payment", "build_skill", "bonus_gather_prob",
                               "coin_utility", "utility", "welfare", "episode_coin",
                               "episode_utility")},
    **{n: FLOAT_TOL for n in ("observations_a", "observations_p", "rewards_a", "rewards_p")},
}  # fmt: skip


def world_params(config: dict[str, Any]) -> aw.GTBWorldParams:
    """The array model's parameters of an env config; ``UnsupportedGpuConfig`` (or the array
    model's ``ValueError``) for what the kernels do not cover."""
    return world_and_market_params(config)[0]


def world_and_market_params(config: dict[str, Any]) -> tuple[aw.GTBWorldParams, Any]:
    """The world's parameters and the market's (``MarketParams``, None without a market) of
    an env config; ``UnsupportedGpuConfig`` (or the array model's ``ValueError``) for what
    the kernels do not cover."""
    config = dict(config)
    name = config.pop("scenario_name", SCENARIO_NAME)
    config.pop("seed", None)
    where = "GatherTradeBuildWorldGpu"
    if name != SCENARIO_NAME:
        raise gs.UnsupportedGpuConfig(
            f"{where}: scenario {name!r}: the GPU kernels cover {SCENARIO_NAME!r} only so far "
            "(the layout comes from its map file)"
        )
    env = foundation.make_env_instance(name, seed=0, **config)
    components = tuple(c.name for c in env.components)
    gs.check_gpu_support_components(components, where)
    params = aw.GTBWorldParams.from_env(env, components)
    gs.check_gpu_support(params, where)
    if "ContinuousDoubleAuction" not in components:
        return params, None
    market = MarketParams.from_component(env.get_component("ContinuousDoubleAuction"))
    ms.check_market_support(market, where)
    if env.world.agents[0].multi_action_mode:
        raise gs.UnsupportedGpuConfig(
            f"{where}: multi_action_mode_agents=True; the GPU world takes one action per agent "
            "(the published configs' single-action mode)"
        )
    return params, market


class GatherTradeBuildWorldGpu(GpuEnvironment):
    """Gather-trade-build's world on the generic GPU path (see the module docstring).

    Args:
        env_config: a ``layout_from_file/simple_wood_and_stone`` config (default
            :data:`WORLD_CONFIG`).
        threads_per_env: threads of an env's block (default: the agents and the planner
            rounded up to a warp, 32 for the paper's config).
    """

    name = "gather_trade_build_world"
    default_config = WORLD_CONFIG
    step_kernel, reset_kernel, numba_module = STEP_KERNEL, RESET_KERNEL, NUMBA_MODULE
    cuda_file = "gtb_world_step.cu"

    def __init__(self, env_config: dict[str, Any] | None = None,
                 threads_per_env: int | None = None) -> None:  # fmt: skip
        self.env_config = dict(self.default_config if env_config is None else env_config)
        self.params, self.market = world_and_market_params(self.env_config)
        self._check_market()
        params = self.params
        self.episode_length = int(params.episode_length)
        self.num_agents = params.n_agents + 1
        if threads_per_env is None:
            threads_per_env = -(-self.num_agents // 32) * 32
        if not self.num_agents <= int(threads_per_env) <= 1024:
            raise ValueError(
                f"{self.name}: threads_per_env={threads_per_env}: needs {self.num_agents}..1024 "
                f"(one thread per agent and the planner)"
            )
        self.threads_per_env = int(threads_per_env)
        self._static = array_obs.static_windows(params)

    def _check_market(self) -> None:
        if self.market is not None:
            raise gs.UnsupportedGpuConfig(
                f"{self.name}: the config has a ContinuousDoubleAuction; the world with the "
                "market is GatherTradeBuildMarketWorldGpu"
            )

    def config(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this environment."""
        return {"env_config": self.env_config, "threads_per_env": self.threads_per_env}

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        return gs.state_dims(self.params, self.market)

    def state_fields(self) -> list[StateField]:
        return gs.state_fields(self.market is not None)

    def policies(self) -> dict[str, PolicyGroup]:
        """``"a"``: the mobile agents (threads ``0..A-1``); ``"p"``: the planner (thread A)."""
        d, a = self.dims(), self.params.n_agents
        return {
            "a": PolicyGroup("a", 0, a, d["obs_dim_a"], d["n_actions_a"]),
            "p": PolicyGroup("p", a, 1, d["obs_dim_p"], d["n_actions_p"]),
        }

    def observation_layout(self, tag: str) -> tuple[ObsSegment, ...]:
        """An agent's vector: ``flat``, ``world-map`` (7, s, s), ``world-idx_map`` (2, s, s,
        index codes); the planner's: one flat segment (as the array batch declares them)."""
        if tag == "p":
            return (ObsSegment("flat", (self.dims()["obs_dim_p"],)),)
        side = gs.window_side(self.params)
        return (
            ObsSegment("flat", (len(gs.AGENT_FLAT_KEYS) + gs.market_sizes(self.market)[0],)),
            ObsSegment("world-map", (gs.MAP_CHANNELS, side, side)),
            ObsSegment("world-idx_map", (gs.IDX_CHANNELS, side, side), "index"),
        )

    def kernels(self) -> KernelSpec:
        return KernelSpec(
            step_kernels=(self.step_kernel,),
            reset_kernels=(self.reset_kernel,),
            cuda_source=HERE / "kernels" / self.cuda_file,
            numba_module=self.numba_module,
            threads_per_env=self.threads_per_env,
            defines=gs.kernel_defines(self.market),
        )

    # ------------------------------------------------------------ behaviour
    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Every env reset from its own seed ``seed + e`` (episode 0)."""
        state = reference.initial_state(self.params, num_envs, seed or 0, self._static,
                                        self.market)  # fmt: skip
        return {k: v for k, v in state.items() if k not in ("_timestep_", "_done_")}

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        reference.world_step(state, self.params, self._static, self.market)

    def reference_reset(self, state: dict[str, np.ndarray]) -> None:
        reference.reset_envs(state, self.params, state["_timestep_"] == 0, self._static,
                             self.market)  # fmt: skip

    def parity_tolerances(self) -> dict[str, tuple[float, Any]]:
        return dict(TOLERANCES)

    def episode_metrics(self, pull: Callable[[str], np.ndarray]) -> dict[str, float]:
        """Means over the envs' last completed episodes: productivity, equality, their
        product, and per agent coin and labour."""
        done = pull("completions") > 0
        if not done.any():
            return {}
        coin, labor = pull("episode_coin")[done], pull("episode_labor")[done]
        utility = pull("episode_utility")[done]
        prod = np.array([social_metrics.get_productivity(c) for c in coin])
        eq = np.array([social_metrics.get_equality(c) for c in coin])
        out = {
            "social/productivity": float(prod.mean()),
            "social/equality": float(eq.mean()),
            "social_welfare/coin_eq_times_productivity": float(
                np.mean([social_rewards.coin_eq_times_productivity(c, 1.0) for c in coin])
            ),
            "social_welfare/inv_income_weighted_utility": float(
                np.mean(
                    [
                        social_rewards.inv_income_weighted_utility(c, u)
                        for c, u in zip(coin, utility)
                    ]
                )
            ),
        }
        for i in range(coin.shape[1]):
            out[f"endow/{i}/Coin"] = float(coin[:, i].mean())
            out[f"endogenous/{i}/Labor"] = float(labor[:, i].mean())
        return out


class GatherTradeBuildMarketWorldGpu(GatherTradeBuildWorldGpu):
    """The world with the market (``Build``, ``ContinuousDoubleAuction``, ``Gather``): the
    market steps between Build and Gather, its orders are the agents' actions ``2 .. 2 + 2 C P
    - 1`` (the moves follow), its blocks sit in the vectors where the dict env's sorted keys
    put them (``docs/gtb-gpu.md``). Not registered for training: the published configs have
    the tax (:class:`~.economy_env.GatherTradeBuildEconomyGpu` is registered).

    Args:
        env_config: a ``layout_from_file/simple_wood_and_stone`` config with the market
            (default :data:`MARKET_WORLD_CONFIG`).
        threads_per_env: as :class:`GatherTradeBuildWorldGpu`.
    """

    name = "gather_trade_build_market_world"
    default_config = MARKET_WORLD_CONFIG
    step_kernel, reset_kernel = MARKET_STEP_KERNEL, MARKET_RESET_KERNEL
    numba_module = MARKET_NUMBA_MODULE
    cuda_file = "gtb_market_world_step.cu"

    def _check_market(self) -> None:
        if self.market is None:
            raise gs.UnsupportedGpuConfig(
                f"{self.name}: the config has no ContinuousDoubleAuction (components "
                f"{list(gs.MARKET_COMPONENTS)}); the world alone is GatherTradeBuildWorldGpu"
            )
