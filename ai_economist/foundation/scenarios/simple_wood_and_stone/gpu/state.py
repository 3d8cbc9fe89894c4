"""The device state of gather-trade-build's world, declared once (``StateField``s).

What one environment holds on the GPU, with shapes from the config (``state_dims``): the
resource maps and house owners (``(2, H, W)``, ``(H, W)``), the agents' locations,
inventories (Coin, Stone, Wood, as :mod:`..array_rules`), escrow (the market's open
orders; zero without a market), labour, skills, the reward baselines, and the trainer's arrays of the two
policies ``"a"`` (the mobile agents, threads ``0..A-1``) and ``"p"`` (the planner, thread
``A``). The layout (the packaged map file's first resources and water), the regrowth cells
and the fixed-four corners are constants stored once. Money, labour and skills are float64
(the array model's numbers, so the kernels agree with it to the last bit where the math
allows); maps float32; observations, masks and rewards float32.

Scalar settings travel in two constant arrays, ``world_params`` (float64, names
:data:`FLOAT_PARAMS`) and ``world_iparams`` (int32, :data:`INT_PARAMS`), indexed by the
``P_*`` / ``I_*`` constants of :func:`kernel_defines` (C) and of this module (Numba), so the
kernels work with parameter lists or a pointer table alike.

With a market (``market``: its ``MarketParams``; the world of
``GatherTradeBuildMarketWorldGpu``) the market's arrays (:mod:`.market_state`) join the
declaration, the agents' vectors hold its block after the ``Build-*`` features, the
planner's before its ``time``, and the action space its ``2 C P`` orders after build
(:func:`move_start`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.limits import (  # noqa: F401
    MAX_AGENTS,
    UnsupportedGpuConfig,
)
from ai_economist.warp_drive.state import StateField

if TYPE_CHECKING:
    from ai_economist.foundation.components.cda_batched import MarketParams


SUPPORTED_COMPONENTS = ("Build", "Gather")
MARKET_COMPONENTS = ("Build", "ContinuousDoubleAuction", "Gather")  # the world with the market
MAX_WORLD_CELLS = 4096  # 64 x 64: an env's maps fit a block's shared memory (later kernels)
SKILL_DISTS = ("none", "pareto", "lognormal")
N_ACTIONS_A = aw.N_ACTIONS  # 0 NO-OP, 1 build, 2..5 left, right, up, down
N_ACTIONS_P = 1  # NO-OP until PeriodicBracketTax plugs in
MAP_CHANNELS, IDX_CHANNELS = 7, 2  # world-map (6 layers + on-map), world-idx_map

FLOAT_PARAMS = (
    "regen_weight", "max_health", "starting_agent_coin", "payment",
    "payment_max_skill_multiplier", "build_labor", "move_labor", "collect_labor",
    "isoelastic_eta", "energy_cost", "energy_warmup_constant",
    "mixing_weight_gini_vs_coin", "inv_scale", "time_scale",
)  # fmt: skip
INT_PARAMS = (
    "episode_length", "observation_range", "build_skill_dist", "gather_skill_dist",
    "fixed_four", "energy_warmup_auto",
)  # fmt: skip
P = {name: i for i, name in enumerate(FLOAT_PARAMS)}
I = {name: i for i, name in enumerate(INT_PARAMS)}  # noqa: E741
# The agents' scalar observations in the dict env's ``flat`` order (sorted keys).
AGENT_FLAT_KEYS = (
    "Build-build_payment", "Build-build_skill", "Gather-bonus_gather_prob", "time",
    "world-inventory-Coin", "world-inventory-Stone", "world-inventory-Wood",
    "world-loc-col", "world-loc-row",
)  # fmt: skip
PLANNER_FLAT = 1 + len(rules.INVENTORY)  # time, then its own (empty) inventory


def check_gpu_support_components(components: tuple[str, ...], where: str) -> None:
    """Raise :class:`UnsupportedGpuConfig` unless the components are Build then Gather, or
    Build, ContinuousDoubleAuction, Gather (:data:`MARKET_COMPONENTS`)."""
    if tuple(components) not in (SUPPORTED_COMPONENTS, MARKET_COMPONENTS):
        extra = [c for c in components if c not in MARKET_COMPONENTS]
        raise UnsupportedGpuConfig(
            f"{where}: components {list(components)}: the gather-trade-build GPU kernels cover "
            f"{list(SUPPORTED_COMPONENTS)} or {list(MARKET_COMPONENTS)} in that order so far"
            + (f"; not yet {extra}" if extra else "")
        )


def check_gpu_support(params: aw.GTBWorldParams, where: str) -> None:
    """Raise :class:`UnsupportedGpuConfig` naming the first setting the kernels do not cover:
    more than ``MAX_WORLD_CELLS`` map cells, fewer than 2 or more than ``MAX_AGENTS`` agents,
    more agents than cells without water, an unknown skill distribution."""
    h, w = params.world_size
    if h * w > MAX_WORLD_CELLS:
        raise UnsupportedGpuConfig(
            f"{where}: the layout is {h}x{w} = {h * w:,} cells; the GPU kernels support at most "
            f"{MAX_WORLD_CELLS:,} cells (64x64); use a smaller env_layout_file"
        )
    if not 2 <= params.n_agents <= MAX_AGENTS:
        raise UnsupportedGpuConfig(
            f"{where}: n_agents={params.n_agents}; the GPU kernels support 2..{MAX_AGENTS}"
        )
    free = int((~params.water).sum())
    if params.n_agents > free:
        raise UnsupportedGpuConfig(
            f"{where}: n_agents={params.n_agents} but the layout has {free} cells without water"
        )
    for name in ("build_skill_dist", "gather_skill_dist"):
        if getattr(params, name) not in SKILL_DISTS:
            raise UnsupportedGpuConfig(
                f"{where}: {name}={getattr(params, name)!r}; supported: {list(SKILL_DISTS)}"
            )


def window_side(params: aw.GTBWorldParams) -> int:
    """Side ``2r + 1`` of an agent's egocentric window."""
    return 2 * params.observation_range + 1


def regrow_cells(params: aw.GTBWorldParams) -> np.ndarray:
    """int32: flat indices into one env's ``resource_maps`` (2, H, W) of the source cells,
    wood then stone (the array model's :data:`~.array_world.REGROW_ORDER`)."""
    h, w = params.world_size
    parts = [j * h * w + cells for j, cells in zip(aw.REGROW_ORDER, params.source_cells)]
    return np.concatenate(parts).astype(np.int32)


def market_sizes(market: MarketParams | None) -> tuple[int, int, int]:
    """``(agent block, planner block, market actions)`` of the market (zeros without one)."""
    if market is None:
        return 0, 0, 0
    ms = market_state
    return ms.agent_obs_size(market), ms.planner_obs_size(market), ms.n_actions(market)


def move_start(market: MarketParams | None) -> int:
    """Flat index of the first move action: 2 without a market, ``2 + 2 C P`` with one
    (``array_economy.EconomyParams.move_start``)."""
    return 2 + market_sizes(market)[2]


def state_dims(params: aw.GTBWorldParams, market: MarketParams | None = None) -> dict[str, int]:
    """The named sizes of :func:`state_fields` for ``params`` (and the market's, with one)."""
    h, w = params.world_size
    side, a = window_side(params), params.n_agents
    mk_a, mk_p, mk_act = market_sizes(market)
    market_dims = {} if market is None else market_state.state_dims(market)
    return {
        **market_dims,
        "num_agents": a + 1,  # threads that act: the agents and the planner
        "n_agents": a,
        "world_h": h,
        "world_w": w,
        "n_resources": len(rules.COLLECTIBLE),
        "n_goods": len(rules.INVENTORY),
        "n_regrow": int(regrow_cells(params).size),
        "window": side,
        "obs_dim_a": len(AGENT_FLAT_KEYS) + mk_a + (MAP_CHANNELS + IDX_CHANNELS) * side * side,
        "obs_dim_p": mk_p + PLANNER_FLAT + len(rules.INVENTORY) * a,
        "n_actions_a": N_ACTIONS_A + mk_act,
        "n_actions_p": N_ACTIONS_P,
        "n_float_params": len(FLOAT_PARAMS),
        "n_int_params": len(INT_PARAMS),
    }


def _f(name, dtype, shape=(), reset="none", doc="", per_env=True) -> StateField:
    return StateField(name, dtype, shape, per_env=per_env, reset=reset, doc=doc)


def state_fields(market: bool = False) -> list[StateField]:
    """Every device array of the world, in kernel-parameter order. Fields with reset
    ``"none"`` are re-initialised by the reset kernel (``gtb_world_reset``), not by snapshot.
    ``market``: the market's arrays (:func:`.market_state.state_fields`) follow the world's
    per-env arrays, its two constant arrays the world's constants."""
    world = _world_fields()
    if not market:
        return world
    first_constant = next(i for i, f in enumerate(world) if not f.per_env)
    return [*world[:first_constant], *market_state.state_fields(), *world[first_constant:],
            *market_state.constant_fields()]  # fmt: skip


def _world_fields() -> list[StateField]:
    f32, f64, i32 = np.float32, np.float64, np.int32
    agents, goods, hw = ("n_agents",), ("n_agents", "n_goods"), ("world_h", "world_w")
    return [
        _f("_timestep_", i32, reset="snapshot", doc="steps taken in the current episode"),
        _f("_done_", i32, reset="snapshot", doc="1 once the episode has ended"),
        _f("env_seed", i32, doc="the env's seed (base seed + env index): keys every draw"),
        _f("completions", i32, doc="episodes completed (keys an episode's draws)"),
        _f("auto_integrator", i32, doc="steps whose agent rewards summed > 0"),
        _f("resource_maps", f32, ("n_resources", *hw), doc="Stone, Wood health per cell"),
        _f("house_owner", i32, hw, doc="owner of the house on a cell, -1: none"),
        _f("locs", i32, ("n_agents", 2), doc="row, column of every agent"),
        _f("inventory", f64, goods, doc="Coin, Stone, Wood of every agent"),
        _f("escrow", f64, goods, doc="held by open orders (zero without the market)"),
        _f("labor", f64, agents, doc="labour this episode"),
        _f("build_payment", f64, agents, doc="coin per house"),
        _f("build_skill", f64, agents, doc="the drawn build skill"),
        _f("bonus_gather_prob", f64, agents, doc="chance of a second unit per collection"),
        _f("coin_utility", f64, agents, doc="(c^(1-eta) - 1) / (1-eta) of the coin endowment"),
        _f("utility", f64, agents, doc="utility at the last step (reward baseline)"),
        _f("welfare", f64, doc="coin_eq_times_productivity at the last step"),
        _f("move_order", i32, agents, doc="this step's move order: slot -> agent"),
        _f("episode_coin", f64, agents, doc="coin endowments at the end of the last episode"),
        _f("episode_labor", f64, agents, doc="labour at the end of the last episode"),
        _f("episode_utility", f64, agents, doc="utilities at the end of the last episode"),
        _f("observations_a", f32, ("n_agents", "obs_dim_a"), doc="flat, world-map, idx_map"),
        _f("observations_p", f32, (1, "obs_dim_p"), doc="time, inventory, p<i> inventories"),
        _f("action_mask_a", f32, ("n_agents", "n_actions_a")),
        _f("action_mask_p", f32, (1, "n_actions_p")),
        _f("sampled_actions_a", i32, agents, reset="zeros"),
        _f("sampled_actions_p", i32, (1,), reset="zeros"),
        _f("rewards_a", f32, agents, reset="zeros"),
        _f("rewards_p", f32, (1,), reset="zeros"),
        _f("layout_maps", f32, ("n_resources", *hw), per_env=False, doc="sources, first units"),
        _f("water", i32, hw, per_env=False, doc="1 on water"),
        _f("landmarks", i32, hw, per_env=False, doc="1 on water or a source block"),
        _f("regrow_cells", i32, ("n_regrow",), per_env=False, doc="flat source cells"),
        _f("ranked_payments", f64, agents, per_env=False, doc="fixed-four payments, worst first"),
        _f("ranked_locs", i32, ("n_agents", 2), per_env=False, doc="fixed-four corners"),
        _f("world_params", f64, ("n_float_params",), per_env=False, doc="FLOAT_PARAMS"),
        _f("world_iparams", i32, ("n_int_params",), per_env=False, doc="INT_PARAMS"),
    ]


def float_params(params: aw.GTBWorldParams) -> np.ndarray:
    """float64 ``world_params`` in :data:`FLOAT_PARAMS` order."""
    return np.array([float(getattr(params, n)) for n in FLOAT_PARAMS], dtype=np.float64)


def int_params(params: aw.GTBWorldParams) -> np.ndarray:
    """int32 ``world_iparams`` in :data:`INT_PARAMS` order (skill dists as codes of
    :data:`SKILL_DISTS`)."""
    values = {
        "episode_length": params.episode_length,
        "observation_range": params.observation_range,
        "build_skill_dist": SKILL_DISTS.index(params.build_skill_dist),
        "gather_skill_dist": SKILL_DISTS.index(params.gather_skill_dist),
        "fixed_four": int(params.fixed_four),
        "energy_warmup_auto": int(params.energy_warmup_method == "auto"),
    }
    return np.array([values[n] for n in INT_PARAMS], dtype=np.int32)


def constant_values(params: aw.GTBWorldParams) -> dict[str, Any]:
    """Host values of the constant fields."""
    return {
        "layout_maps": params.sources.astype(np.float32),
        "water": params.water.astype(np.int32),
        "landmarks": params.landmarks.astype(np.int32),
        "regrow_cells": regrow_cells(params),
        "ranked_payments": np.asarray(params.ranked_payments, dtype=np.float64),
        "ranked_locs": np.asarray(params.ranked_locs, dtype=np.int32),
        "world_params": float_params(params),
        "world_iparams": int_params(params),
    }


def market_obs_offsets() -> tuple[int, int]:
    """Where the market's blocks start: after the agents' ``Build-*`` features (the market's
    keys sort between Build and Gather), first in the planner's vector."""
    return sum(k.startswith("Build-") for k in AGENT_FLAT_KEYS), 0


def kernel_defines(market: MarketParams | None = None) -> dict[str, int]:
    """C constants of the kernels: ``P_<NAME>`` / ``I_<NAME>`` parameter indices, the
    ``OBS_<KEY>`` positions of the agents' flat features (after the market's block with a
    market), ``OBS_FLAT_A`` (the first map cell), ``OBS_P_TIME`` / ``OBS_FLAT_P`` (the
    planner's time and first ``p<i>``), ``MOVE_START``, the draw streams and limits; with a
    market also its own (:func:`.market_state.kernel_defines`)."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import rng

    mk_a, mk_p, _ = market_sizes(market)
    off_a, _ = market_obs_offsets()
    out = {f"P_{n.upper()}": i for n, i in P.items()}
    out.update({f"I_{n.upper()}": i for n, i in I.items()})
    for k, key in enumerate(AGENT_FLAT_KEYS):
        out["OBS_" + key.replace("-", "_").upper()] = k + (mk_a if k >= off_a else 0)
    out.update({f"STREAM_{n.upper()}": s for n, s in rng.STREAMS.items()})
    out["PLACEMENT_TRIES"] = rng.PLACEMENT_TRIES
    out["OBS_FLAT_A"] = len(AGENT_FLAT_KEYS) + mk_a
    out["OBS_P_TIME"] = mk_p
    out["OBS_FLAT_P"] = mk_p + PLANNER_FLAT
    out["MOVE_START"] = move_start(market)
    if market is not None:
        out.update(market_state.kernel_defines())
    return out
