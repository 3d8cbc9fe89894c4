"""``GatherTradeBuildMarketGpu``: the GPU market on its own, to test its kernels standalone.

A ``GpuEnvironment`` whose whole step is the market (``ContinuousDoubleAuction`` of
gather-trade-build): the agents' goods start from the constant ``start_goods`` (coin first,
as the world's), each agent's action is ``0`` (NO-OP) or one order (``Buy_c`` then ``Sell_c``
per commodity, ``P`` prices each: the dict env's single-action layout without the world's
actions), the observations are the market's blocks (the agents': the other agents' and their
own books, the market rate, the price history; the planner's: the full books, rate, history)
and the masks the market's. Stepped by ``gtb_market_step`` (``kernels/gtb_market_step.cu``,
:mod:`.gtb_market_numba`), reset on the device by ``gtb_market_reset``; the numpy truth is
:mod:`.market_reference` (``cda_batched``). Not registered for training: the market plugs
into ``GatherTradeBuildWorldGpu`` next (``docs/gtb-gpu.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.foundation.components.cda_batched import MarketParams
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_reference as mr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import standalone_env as se
from ai_economist.warp_drive.scenario import KernelSpec, PolicyGroup, block_threads
from ai_economist.warp_drive.state import StateField, policy_io_fields

HERE = Path(__file__).resolve().parent
STEP_KERNEL, RESET_KERNEL = "gtb_market_step", "gtb_market_reset"
ORDERS_KERNEL = "gtb_market_orders_step"  # the orders as market_bids / market_asks hold them
NUMBA_MODULE = "ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_numba"
# The paper's market (phase 1 and 2 configs): 4 agents, prices 0..10, 5 orders of 50 steps.
PAPER_MARKET = MarketParams(commodities=rules.COLLECTIBLE, n_agents=4, max_bid_ask=10,
                            order_labor=0.25, order_duration=50, max_num_orders=5,
                            inv_scale=0.01)  # fmt: skip
# The market's observations are float32 images of doubles summed in another order on the
# device (the market rate); everything else (books, slots, goods, histories) is exact.
TOLERANCES = {n: (1e-6, 1e-6) for n in ("observations_a", "observations_p")}


def market_params(env_config: dict[str, Any]) -> MarketParams:
    """The market of a gather-trade-build env config (its ``ContinuousDoubleAuction``);
    :class:`~.state.UnsupportedGpuConfig` for what the kernels do not cover."""
    cda, _ = se.config_component(env_config, "ContinuousDoubleAuction")
    params = MarketParams.from_component(cda)
    ms.check_market_support(params, "ContinuousDoubleAuction on the GPU")
    return params


def default_start_goods(n_agents: int) -> np.ndarray:
    """float64 ``(A, 3)``: non-integer coin (so the order of coin additions shows), a few
    units of stone and wood."""
    a = np.arange(n_agents)
    return np.stack([17.3 + 3.7 * a, 2.0 + a % 3, 4.0 - 2 * (a % 2)], axis=1)


class GatherTradeBuildMarketGpu(se.StandaloneGpuEnv):
    """The market alone on the generic GPU path (see the module docstring).

    Args:
        params: the market (default :data:`PAPER_MARKET`), or its fields as a mapping (as
            :meth:`config` writes them).
        episode_length: steps per episode.
        start_goods: float64 ``(A, 3)`` coin, stone, wood of every agent at reset.
        threads_per_env: threads of an env's block (default the agents and the planner
            rounded up to a warp).
    """

    name = "gather_trade_build_market"

    def __init__(self, params: MarketParams | Mapping[str, Any] | None = None,
                 episode_length: int = 100, start_goods: Any = None,
                 threads_per_env: int | None = None) -> None:  # fmt: skip
        if isinstance(params, Mapping):
            params = MarketParams(**{**params, "commodities": tuple(params["commodities"])})
        self.params = PAPER_MARKET if params is None else params
        ms.check_market_support(self.params, self.name)
        self.episode_length = se.checked_episode_length(self.name, episode_length)
        a = self.params.n_agents
        goods = default_start_goods(a) if start_goods is None else start_goods
        self.start_goods = np.asarray(goods, dtype=np.float64)
        if self.start_goods.shape != (a, 3) or not (self.start_goods >= 0).all():
            raise ValueError(
                f"{self.name}: start_goods must be >= 0 of shape ({a}, 3) (agents; Coin, "
                f"Stone, Wood), got {self.start_goods.shape}"
            )
        self.num_agents = a + 1
        self.threads_per_env = block_threads(self.name, self.num_agents, threads_per_env)

    def config(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this environment."""
        return {"params": dataclasses.asdict(self.params), "episode_length": self.episode_length,
                "start_goods": self.start_goods.tolist(), "threads_per_env": self.threads_per_env}  # fmt: skip

    def dims(self) -> dict[str, int]:
        d = ms.state_dims(self.params)
        d.update(num_agents=self.num_agents, n_goods=3, n_actions_a=1 + ms.n_actions(self.params))
        return d

    def state_fields(self) -> list[StateField]:
        return [
            *se.clock_fields(),
            *ms.state_fields(),
            *se.goods_fields(),
            se.field("labor", se.F64, ("n_agents",)),
            *policy_io_fields(
                ("a", "n_agents", "obs_dim_market_a", "n_actions_a"),
                ("p", 1, "obs_dim_market_p", 1),
            ),
            se.field("start_goods", se.F64, se.GOODS, per_env=False),
            se.field("episode_length", se.I32, per_env=False),
            *ms.constant_fields(),
        ]

    def policies(self) -> dict[str, PolicyGroup]:
        d, a = self.dims(), self.params.n_agents
        return {
            "a": PolicyGroup("a", 0, a, d["obs_dim_market_a"], d["n_actions_a"]),
            "p": PolicyGroup("p", a, 1, d["obs_dim_market_p"], 1),
        }

    def kernels(self) -> KernelSpec:
        return KernelSpec(
            step_kernels=(STEP_KERNEL,),
            reset_kernels=(RESET_KERNEL,),
            other_kernels=(ORDERS_KERNEL,),
            cuda_source=HERE / "kernels" / "gtb_market_step.cu",
            numba_module=NUMBA_MODULE,
            threads_per_env=self.threads_per_env,
            defines=ms.kernel_defines(),
        )

    # ------------------------------------------------------------ the truth
    def constants(self, seed: int | None = None) -> dict[str, np.ndarray]:
        """Host values of the constant fields (the seed is unused: nothing is drawn)."""
        return {"start_goods": self.start_goods,
                "episode_length": np.int32(self.episode_length),
                **ms.constant_values(self.params, action_offset=1, obs_offset_a=0,
                                     obs_offset_p=0)}  # fmt: skip

    def reference_reset(self, state: dict[str, np.ndarray]) -> None:
        which = state["_timestep_"] == 0
        state["inventory"][which] = self.start_goods
        state["escrow"][which] = 0.0
        state["labor"][which] = 0.0
        mr.reset_market(state, self.params, which)
        self._observe(state, np.flatnonzero(which))

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        state["market_bids"][:], state["market_asks"][:] = mr.split_actions(
            self.params, state["sampled_actions_a"], offset=1
        )
        self.reference_orders_step(state)

    def reference_orders_step(self, state: dict[str, np.ndarray]) -> None:
        """One step with the orders already in ``market_bids`` / ``market_asks`` (the twin of
        the kernel :data:`ORDERS_KERNEL`)."""
        mr.market_step(state, self.params)
        state["_timestep_"] += 1
        state["_done_"][state["_timestep_"] >= self.episode_length] = 1
        self._observe(state, slice(None))

    def _observe(self, state: dict[str, np.ndarray], idx: Any) -> None:
        state["action_mask_a"][idx, :, 0] = 1.0
        state["action_mask_p"][idx] = 1.0
        mr.observe_market(state, self.params, idx)

    def parity_tolerances(self) -> dict[str, tuple[float, Any]]:
        return dict(TOLERANCES)
