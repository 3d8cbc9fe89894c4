"""``GatherTradeBuildTaxGpu``: the GPU tax (``PeriodicBracketTax``) alone, to test its kernels
standalone.

A ``GpuEnvironment`` whose step is an action-driven income process and the tax: agent
``i``'s action ``k`` in ``1..L`` earns ``k * income_unit[i]`` coin, ``L + 1`` moves half its
inventory coin into escrow (escrow counts as income but is never taxed), ``L + 2`` moves its
escrow back; then the Saez model's rates on a period's first step, then ``tax_step`` (the
planner's bracket picks on a first step, taxes and the lump sum on a tax day). The agents'
observations are the tax's block, the planner's (one row per bracket agent when it sets the
rates) the tax's flat block, the ``p<i>`` fields and the bracket's one-hot; the planner's
masks are the tax's (annealed). ``completions`` counts finished episodes (the annealing).
Stepped by ``gtb_tax_step`` (``kernels/gtb_tax_step.cu``, :mod:`.gtb_tax_numba`), reset on
the device by ``gtb_tax_reset``; the numpy truth is :mod:`.tax_reference` (``array_tax``).
Not registered for training: a test env of the tax alone; the economy that trains is ``GatherTradeBuildEconomyGpu`` (world, market and this tax; ``docs/gtb-gpu.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_tax import TaxParams
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import standalone_env as se
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_reference as tr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_state as ts
from ai_economist.warp_drive.scenario import KernelSpec, PolicyGroup, block_threads
from ai_economist.warp_drive.state import StateField, policy_io_fields

HERE = Path(__file__).resolve().parent
STEP_KERNEL, RESET_KERNEL = "gtb_tax_step", "gtb_tax_reset"
NUMBA_MODULE = "ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_tax_numba"
INCOME_LEVELS = 4
# float32 images and the Saez formula (its normal equations solved in closed form on the
# device, numpy's linalg.solve in the reference; sums in another order): named tolerances.
TOLERANCES = {"observations_a": (1e-6, 1e-6), "observations_p": (1e-6, 1e-6)}
SAEZ_TOLERANCES = {n: (1e-7, 1e-9) for n in (
    "saez_buffer", "saez_elas", "saez_log_z0", "saez_rates", "saez_running_avg", "tax_rates_obs",
    "last_income", "last_marginal_rate", "last_coin", "inventory", "total_collected",
    "last_lump_sum")}  # fmt: skip


def paper_tax(tax_model: str = "model_wrapper", **overrides: Any) -> TaxParams:
    """The paper's tax (US-federal brackets scaled by 1000, rates 0..1 by 0.05, period 100)
    with ``overrides``; ``fixed-bracket-rates`` takes the 2018 US rates reversed."""
    cutoffs = tb.make_bracket_cutoffs("us-federal", 7, 100.0, 1000.0)
    fixed = np.zeros(7)
    if tax_model == "us-federal-single-filer-2018-scaled":
        fixed = np.array(tb.US_FEDERAL_2018_RATES)
    elif tax_model == "fixed-bracket-rates":
        fixed = np.array(tb.US_FEDERAL_2018_RATES[::-1])
    base = {"tax_model": tax_model, "disable_taxes": False, "period": 100, "cutoffs": cutoffs,
            "disc_rates": tb.discretized_rates(0.0, 1.0, 0.05), "fixed_rates": fixed,
            "rate_max": 1.0, "annealing": None}  # fmt: skip
    return TaxParams(**{**base, **overrides})


def tax_params(env_config: dict[str, Any], n_agents: int | None = None) -> TaxParams:
    """The tax of a gather-trade-build env config (its ``PeriodicBracketTax``);
    :class:`~.state.UnsupportedGpuConfig` for what the kernels do not cover."""
    tax, env = se.config_component(env_config, "PeriodicBracketTax")
    params = TaxParams.from_component(tax)
    ts.check_tax_support(params, env.n_agents if n_agents is None else n_agents,
                         "PeriodicBracketTax on the GPU")  # fmt: skip
    return params


class GatherTradeBuildTaxGpu(se.StandaloneGpuEnv):
    """The tax alone on the generic GPU path (see the module docstring).

    Args:
        params: the tax (default :func:`paper_tax`).
        n_agents: agents ``A``.
        episode_length: steps per episode.
        income_unit: float64 ``(A,)`` coin per income level (default ``1.3 + 0.9 i``).
        start_coin: float64 ``(A,)`` coin at reset (default ``5 + 2.5 i``).
        threads_per_env: threads of an env's block (default the agents and the planner's
            agents rounded up to a warp).
    """

    name = "gather_trade_build_tax"

    def __init__(self, params: TaxParams | None = None, n_agents: int = 4,
                 episode_length: int = 30, income_unit: Any = None, start_coin: Any = None,
                 threads_per_env: int | None = None) -> None:  # fmt: skip
        self.params = paper_tax() if params is None else params
        ts.check_tax_support(self.params, n_agents, self.name)
        self.n_agents = a = int(n_agents)
        self.episode_length = se.checked_episode_length(self.name, episode_length)
        i = np.arange(a)
        self.income_unit = np.asarray(1.3 + 0.9 * i if income_unit is None else income_unit,
                                      dtype=np.float64)  # fmt: skip
        self.start_coin = np.asarray(5.0 + 2.5 * i if start_coin is None else start_coin,
                                     dtype=np.float64)  # fmt: skip
        for key, value in (("income_unit", self.income_unit), ("start_coin", self.start_coin)):
            if value.shape != (a,) or not (value >= 0).all():
                raise ValueError(f"{self.name}: {key} must be >= 0 of shape ({a},)")
        self.n_planner = ts.n_planner_agents(self.params)
        self.num_agents = a + self.n_planner
        needed = max(self.num_agents, self.params.n_brackets)
        self.threads_per_env = block_threads(self.name, needed, threads_per_env)

    # ------------------------------------------------------------ declaration
    def one_hot_size(self) -> int:
        """The bracket one-hot of the planner's rows (0 when it sets no rates)."""
        return self.n_planner if self.n_planner > 1 else 0

    def dims(self) -> dict[str, int]:
        d = ts.state_dims(self.params, self.n_agents)
        obs_p = d["obs_dim_tax_p"] + 3 * self.n_agents + self.one_hot_size()
        d.update(num_agents=self.num_agents, n_goods=3, n_planner=self.n_planner,
                 n_actions_a=INCOME_LEVELS + 3, n_actions_p=ts.n_planner_actions(self.params),
                 obs_dim_p=obs_p)  # fmt: skip
        return d

    def state_fields(self) -> list[StateField]:
        return [
            *se.clock_fields(),
            se.field("completions", se.I32),
            *ts.state_fields(),
            *se.goods_fields(),
            *policy_io_fields(
                ("a", "n_agents", "obs_dim_tax_a", "n_actions_a"),
                ("p", "n_planner", "obs_dim_p", "n_actions_p"),
            ),
            se.field("start_coin", se.F64, ("n_agents",), per_env=False),
            se.field("income_unit", se.F64, ("n_agents",), per_env=False),
            se.field("episode_length", se.I32, per_env=False),
            *ts.constant_fields(),
        ]

    def policies(self) -> dict[str, PolicyGroup]:
        d, a = self.dims(), self.n_agents
        return {
            "a": PolicyGroup("a", 0, a, d["obs_dim_tax_a"], d["n_actions_a"]),
            "p": PolicyGroup("p", a, self.n_planner, d["obs_dim_p"], d["n_actions_p"]),
        }

    def kernels(self) -> KernelSpec:
        return KernelSpec(
            step_kernels=(STEP_KERNEL,),
            reset_kernels=(RESET_KERNEL,),
            cuda_source=HERE / "kernels" / "gtb_tax_step.cu",
            numba_module=NUMBA_MODULE,
            threads_per_env=self.threads_per_env,
            defines=ts.kernel_defines(),
        )

    # ------------------------------------------------------------ the truth
    def constants(self, seed: int | None = None) -> dict[str, np.ndarray]:
        """Host values of the constant fields (``seed``: the Saez draws')."""
        a = self.n_agents
        return {"start_coin": self.start_coin, "income_unit": self.income_unit,
                "episode_length": np.int32(self.episode_length),
                **ts.constant_values(self.params, obs_offset_a=0, obs_offset_p=0,
                                     obs_offset_pa=ts.planner_obs_size(self.params, a),
                                     obs_stride_pa=3, seed=seed)}  # fmt: skip

    def prepare(self, state: dict[str, np.ndarray]) -> None:
        """The Saez estimate at its start value 0.5."""
        state["saez_elas"][:] = 0.5

    def reference_reset(self, state: dict[str, np.ndarray]) -> None:
        which = state["_timestep_"] == 0
        state["inventory"][which] = 0.0
        state["escrow"][which] = 0.0
        state["inventory"][which, :, rules.COIN] = self.start_coin
        state["tax_rate_completions"][which] = state["completions"][which]
        tr.reset_tax(state, self.params, which)
        self._observe(state, np.flatnonzero(which))

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        state["tax_rate_completions"][:] = state["completions"]
        self.income_step(state)
        tr.saez_first_day(state, self.params, int(state["rng_seed"]))
        planner = state["sampled_actions_p"] if self.params.planner_sets_rates else None
        tr.tax_step(state, self.params, None if planner is None else planner.astype(np.int64))
        state["_timestep_"] += 1
        done = state["_timestep_"] >= self.episode_length
        state["_done_"][done] = 1
        state["completions"][done] += 1
        self._observe(state, slice(None))

    def income_step(self, state: dict[str, np.ndarray]) -> None:
        """The agents' actions: earn, lock half the inventory coin in escrow, or unlock it."""
        act = state["sampled_actions_a"]
        inv, esc = state["inventory"][..., rules.COIN], state["escrow"][..., rules.COIN]
        earn = (act >= 1) & (act <= INCOME_LEVELS)
        inv += np.where(earn, act * self.income_unit, 0.0)
        lock = act == INCOME_LEVELS + 1
        half = 0.5 * inv
        inv[lock] -= half[lock]
        esc[lock] += half[lock]
        unlock = act == INCOME_LEVELS + 2
        inv[unlock] += esc[unlock]
        esc[unlock] = 0.0
        state["inventory"][..., rules.COIN] = inv
        state["escrow"][..., rules.COIN] = esc

    def _observe(self, state: dict[str, np.ndarray], idx: Any) -> None:
        state["action_mask_a"][idx] = 1.0
        masks = tr.planner_masks(state, self.params, state["completions"])
        state["action_mask_p"][idx] = masks[idx]
        tr.observe_tax(state, self.params, idx)
        n_hot = self.one_hot_size()
        if n_hot:
            state["observations_p"][idx, :, -n_hot:] = np.eye(n_hot, dtype=np.float32)

    def parity_tolerances(self) -> dict[str, tuple[float, Any]]:
        if self.params.tax_model == "saez":
            return {**SAEZ_TOLERANCES, "observations_a": (1e-5, 1e-6),
                    "observations_p": (1e-5, 1e-6)}  # fmt: skip
        return dict(TOLERANCES)
