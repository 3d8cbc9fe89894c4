"""``GatherTradeBuildEconomyGpu``: the full gather-trade-build economy (``Build``,
``ContinuousDoubleAuction``, ``Gather``, ``PeriodicBracketTax``: the paper's phase-1 and
phase-2 configs, :data:`PHASE1_CONFIG`, :data:`PHASE2_CONFIG`) as a ``GpuEnvironment``.

The world with the market (:class:`~.env.GatherTradeBuildMarketWorldGpu`) and the tax
(:mod:`.tax_state`, :mod:`.tax_reference`) in one step, in ``array_economy.step``'s order:
the clock, Build, the market, Gather and the regrowth, the Saez rates of a first day and the
tax (the planner's picks, a tax day's taxes and lump sums), the coin-utility refresh, the
rewards. The observation and action layout is ``ArrayGatherTradeBuildBatch``'s: the agents'
vectors hold the tax's block after ``Gather-bonus_gather_prob``; the planner is one policy
agent per bracket when it sets the rates (phase 2; the bracket one-hot closes its vector),
one NO-OP agent otherwise (phase 1, or a fixed / US-federal / Saez schedule). The numpy
reference is :mod:`.economy_reference`; the state :mod:`.economy_state`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    PHASE2_ENV_CONFIG,
    env_config,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_reference as er
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_state as es
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_state as ts
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    NUMBA_MODULE,
    TOLERANCES,
    GatherTradeBuildWorldGpu,
    world_and_market_params,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.tax_env import (
    SAEZ_TOLERANCES,
    tax_params,
)
from ai_economist.warp_drive.obs_layout import ObsSegment
from ai_economist.warp_drive.scenario import KernelSpec, PolicyGroup
from ai_economist.warp_drive.state import StateField

PHASE1_CONFIG: dict[str, Any] = {**env_config(PHASE1_ENV_CONFIG), "dense_log_frequency": None}
PHASE2_CONFIG: dict[str, Any] = {**env_config(PHASE2_ENV_CONFIG), "dense_log_frequency": None}
STEP_KERNEL, RESET_KERNEL = "gtb_economy_step", "gtb_economy_reset"
ECONOMY_NUMBA_MODULE = NUMBA_MODULE.replace("gtb_world_numba", "gtb_economy_numba")
NUMBA_FACTORY = "make_numba_kernels"  # of ECONOMY_NUMBA_MODULE: kernels of constant shapes


def economy_params(config: dict[str, Any]) -> tuple[Any, Any, Any]:
    """``(GTBWorldParams, MarketParams, TaxParams)`` of an env config with the economy's
    components (:data:`.economy_state.ECONOMY_COMPONENTS`);
    :class:`~.state.UnsupportedGpuConfig` naming what the kernels do not cover."""
    components = list(config.get("components", []))
    names = [next(iter(c)) if isinstance(c, dict) and len(c) == 1 else repr(c) for c in components]
    es.check_economy_components(names, GatherTradeBuildEconomyGpu.__name__)
    params, market = world_and_market_params({**config, "components": components[:-1]})
    tax = tax_params(config, params.n_agents)
    return params, market, tax


class GatherTradeBuildEconomyGpu(GatherTradeBuildWorldGpu):
    """The full economy on the generic GPU path (see the module docstring).

    Args:
        env_config: a ``layout_from_file/simple_wood_and_stone`` config with Build,
            ContinuousDoubleAuction, Gather and PeriodicBracketTax (default
            :data:`PHASE2_CONFIG`).
        threads_per_env: threads of an env's block (default: the agents and the planner's
            agents, at least the brackets, rounded up to a warp; 32 for the paper).
    """

    name = "gather_trade_build_economy"
    default_config = PHASE2_CONFIG
    step_kernel, reset_kernel = STEP_KERNEL, RESET_KERNEL
    numba_module = ECONOMY_NUMBA_MODULE
    cuda_file = "gtb_economy_step.cu"

    def __init__(self, env_config: dict[str, Any] | None = None,
                 threads_per_env: int | None = None) -> None:  # fmt: skip
        self.env_config = dict(self.default_config if env_config is None else env_config)
        self.params, self.market, self.tax = economy_params(self.env_config)
        self.episode_length = int(self.params.episode_length)
        self.n_planner = ts.n_planner_agents(self.tax)
        self.num_agents = self.params.n_agents + self.n_planner
        need = max(self.num_agents, self.tax.n_brackets)
        if threads_per_env is None:
            threads_per_env = -(-need // 32) * 32
        if not need <= int(threads_per_env) <= 1024:
            raise ValueError(
                f"{self.name}: threads_per_env={threads_per_env}: needs {need}..1024 (one "
                "thread per agent, planner agent and tax bracket)"
            )
        self.threads_per_env = int(threads_per_env)
        self._static = array_obs.static_windows(self.params)

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        return es.state_dims(self.params, self.market, self.tax)

    def state_fields(self) -> list[StateField]:
        return es.state_fields()

    def policies(self) -> dict[str, PolicyGroup]:
        """``"a"``: the mobile agents (threads ``0..A-1``); ``"p"``: the planner's agents
        (threads ``A..A+n_planner-1``: one per bracket when it sets the rates)."""
        d, a = self.dims(), self.params.n_agents
        return {
            "a": PolicyGroup("a", 0, a, d["obs_dim_a"], d["n_actions_a"]),
            "p": PolicyGroup("p", a, self.n_planner, d["obs_dim_p"], d["n_actions_p"]),
        }

    def observation_layout(self, tag: str) -> tuple[ObsSegment, ...]:
        """As ``ArrayGatherTradeBuildBatch``: an agent's ``flat``, ``world-map`` (7, s, s),
        ``world-idx_map`` (2, s, s, index codes); the planner's one flat segment."""
        if tag == "p":
            return (ObsSegment("flat", (self.dims()["obs_dim_p"],)),)
        side = gs.window_side(self.params)
        flat = es.offsets(self.market, self.tax, self.params.n_agents)["flat_a"]
        return (
            ObsSegment("flat", (flat,)),
            ObsSegment("world-map", (gs.MAP_CHANNELS, side, side)),
            ObsSegment("world-idx_map", (gs.IDX_CHANNELS, side, side), "index"),
        )

    def kernel_defines(self) -> dict[str, int]:
        """C constants of the kernels (the world's with the market's shifts, the tax's
        indices; the tax's block positions travel in ``tax_iparams``)."""
        out = gs.kernel_defines(self.market)
        out.update(ts.kernel_defines())
        off = es.offsets(self.market, self.tax, self.params.n_agents)
        for k, key in enumerate(gs.AGENT_FLAT_KEYS):
            pos = es.agent_flat_positions(self.market, self.tax, self.params.n_agents)[k]
            out["OBS_" + key.replace("-", "_").upper()] = int(pos)
        out.update(OBS_FLAT_A=off["flat_a"], OBS_P_TIME=off["p_time"],
                   OBS_FLAT_P=off["tax_pa"], OBS_STRIDE_P=es.P_AGENT_STRIDE,
                   OBS_P_INV_IN_STRIDE=len(ts.PLANNER_AGENT_FIELDS),
                   OBS_ONE_HOT_P=off["one_hot"])  # fmt: skip
        return out

    def kernels(self) -> KernelSpec:
        """The world's, with the economy's defines; the Numba kernels are built for this
        env's shapes (``gtb_economy_numba.make_numba_kernels``)."""
        return dataclasses.replace(super().kernels(), defines=self.kernel_defines(),
                                   numba_factory=NUMBA_FACTORY)  # fmt: skip

    # ------------------------------------------------------------ behaviour
    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Every env reset from its own seed ``seed + e`` (episode 0); the Saez draws keyed
        by ``seed``."""
        state = er.initial_state(self.params, self.market, self.tax, num_envs, seed or 0,
                                 self._static)  # fmt: skip
        return {k: v for k, v in state.items() if k not in ("_timestep_", "_done_")}

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        er.economy_step(state, self.params, self.market, self.tax, self._static)

    def reference_reset(self, state: dict[str, np.ndarray]) -> None:
        er.reset_envs(state, self.params, self.market, self.tax, state["_timestep_"] == 0,
                      self._static)  # fmt: skip

    def parity_tolerances(self) -> dict[str, tuple[float, Any]]:
        """The world's; with the Saez model also the tax's Saez tolerances (its formula
        solves its normal equations in closed form on the device)."""
        out = dict(TOLERANCES)
        if self.tax.tax_model == "saez":
            out.update(SAEZ_TOLERANCES)
            out.update({n: (1e-5, 1e-6) for n in ("observations_a", "observations_p",
                                                  "coin_utility", "utility", "welfare",
                                                  "rewards_a", "rewards_p")})  # fmt: skip
        return out
