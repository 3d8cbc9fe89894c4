"""``GatherTradeBuildWorldGpu``: gather-trade-build's world (Build, Gather, regrowth) as a
``GpuEnvironment``: one block per env, agents as threads, every array on the device, resets
on the device (``gtb_world_reset``), stepped by ``gtb_world_step``.

The config is a ``layout_from_file/simple_wood_and_stone`` env config (as in the run
configs); :data:`WORLD_CONFIG` is the paper's (4 agents + planner, 25x25 quadrant map,
1,000-step episodes, fixed four skills and corners, phase 1's labour-cost annealing) without
the market and the tax, which the kernels do not cover yet. Env ``e`` is seeded
``seed + e``; every draw is keyed by that seed and the env's episode count (:mod:`.rng`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)
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
    return params


class GatherTradeBuildWorldGpu(GpuEnvironment):
    """Gather-trade-build's world on the generic GPU path (see the module docstring).

    Args:
        env_config: a ``layout_from_file/simple_wood_and_stone`` config (default
            :data:`WORLD_CONFIG`).
        threads_per_env: threads of an env's block (default: the agents and the planner
            rounded up to a warp, 32 for the paper's config).
    """

    name = "gather_trade_build_world"

    def __init__(self, env_config: dict[str, Any] | None = None,
                 threads_per_env: int | None = None) -> None:  # fmt: skip
        self.env_config = dict(WORLD_CONFIG if env_config is None else env_config)
        self.params = params = world_params(self.env_config)
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

    def config(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this environment."""
        return {"env_config": self.env_config, "threads_per_env": self.threads_per_env}

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        return gs.state_dims(self.params)

    def state_fields(self) -> list[StateField]:
        return gs.state_fields()

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
            ObsSegment("flat", (len(gs.AGENT_FLAT_KEYS),)),
            ObsSegment("world-map", (gs.MAP_CHANNELS, side, side)),
            ObsSegment("world-idx_map", (gs.IDX_CHANNELS, side, side), "index"),
        )

    def kernels(self) -> KernelSpec:
        return KernelSpec(
            step_kernels=(STEP_KERNEL,),
            reset_kernels=(RESET_KERNEL,),
            cuda_source=HERE / "kernels" / "gtb_world_step.cu",
            numba_module=NUMBA_MODULE,
            threads_per_env=self.threads_per_env,
            defines=gs.kernel_defines(),
        )

    # ------------------------------------------------------------ behaviour
    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Every env reset from its own seed ``seed + e`` (episode 0)."""
        state = reference.initial_state(self.params, num_envs, seed or 0, self._static)
        return {k: v for k, v in state.items() if k not in ("_timestep_", "_done_")}

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        reference.world_step(state, self.params, self._static)

    def reference_reset(self, state: dict[str, np.ndarray]) -> None:
        reference.reset_envs(state, self.params, state["_timestep_"] == 0, self._static)

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
