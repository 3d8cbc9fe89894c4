"""Gather-trade-build's world as Numba ``@cuda.jit`` kernels: the twins of
``kernels/gtb_world_step.cu`` and of :mod:`.reference`.

``gtb_world_reset`` re-initialises every env whose ``_timestep_`` is 0 (after the generic
reset; idempotent); ``gtb_world_step`` advances every env one step. One block per env:
threads ``0..A-1`` are the agents, thread ``A`` the planner, every thread shares the loops
over map cells. Both take the declared fields (``state.state_fields``) in declaration order;
sizes come from the arrays' shapes, settings from ``world_params`` / ``world_iparams``.
"""

from __future__ import annotations

from numba import cuda

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_world_numba_parts import (
    I_BDIST,
    I_FIXED,
    I_GDIST,
    I_LEN,
    I_RANGE,
    N_FLAT,
    P_COIN0,
    P_ECOST,
    P_INV,
    P_PAY,
    P_PMSM,
    P_TIME,
    PLACEMENT_TRIES,
    S_BUILD,
    S_GATHER_SKILL,
    S_MOVE,
    S_PLACE,
    S_RANK,
    apply_gathers,
    below,
    build_masks,
    build_step,
    coin_utility_of,
    draw_bits,
    energy_weight,
    move_agent_slot,
    move_masks,
    occupied,
    rank_of,
    regrow_step,
    skill_draw,
    welfare_of,
    write_flat,
    write_window_cell,
)  # fmt: skip
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.numba_kernels import (
    RESET,
    STEP,
    field_kernel,
)
from ai_economist.warp_drive.numba_loops import device_jit


@device_jit
def place_agents(env, seed, ep, locs, water):
    """``reference.place_agents`` of one env (one thread)."""
    n, h, w = locs.shape[1], water.shape[0], water.shape[1]
    for i in range(n):
        placed = False
        for k in range(PLACEMENT_TRIES):
            index = 2 * (i * PLACEMENT_TRIES + k)
            r = below(draw_bits(seed, ep, 0, S_PLACE, index), h)
            c = below(draw_bits(seed, ep, 0, S_PLACE, index + 1), w)
            if water[r, c] == 0 and not occupied(locs, env, i, r, c):
                locs[env, i, 0], locs[env, i, 1] = r, c
                placed = True
                break
        if not placed:  # reference.first_free_cell
            for cell in range(h * w):
                r, c = cell // w, cell % w
                if water[r, c] == 0 and not occupied(locs, env, i, r, c):
                    locs[env, i, 0], locs[env, i, 1] = r, c
                    break


@device_jit
def reset_agent(env, a, seed, ep, locs, inventory, escrow, labor, build_payment, build_skill,
                bonus, move_order, ranked_payments, ranked_locs, params, iparams):  # fmt: skip
    """``reference.reset_envs`` for agent ``a``: inventory, skills, the fixed-four slot."""
    for k in range(3):
        inventory[env, a, k] = 0.0
        escrow[env, a, k] = 0.0
    inventory[env, a, 0] = params[P_COIN0]
    labor[env, a] = 0.0
    move_order[env, a] = a
    dist, pmsm = iparams[I_BDIST], params[P_PMSM]
    if dist == 0:
        skill, rate = 1.0, 1.0
    else:
        skill = skill_draw(seed, ep, S_BUILD, a, dist, 4.0, -1.0, 0.5)
        rate = min(pmsm, (pmsm - 1) * skill + 1)
    build_skill[env, a] = skill
    build_payment[env, a] = rate * params[P_PAY]
    dist = iparams[I_GDIST]
    bonus[env, a] = 0.0
    if dist != 0:
        bonus[env, a] = (
            min(2.0, skill_draw(seed, ep, S_GATHER_SKILL, a, dist, 3.0, -2.022, 0.938)) / 2
        )
    if iparams[I_FIXED] == 1:
        rank = rank_of(seed, ep, 0, S_RANK, a, locs.shape[1])
        locs[env, a, 0], locs[env, a, 1] = ranked_locs[rank, 0], ranked_locs[rank, 1]
        build_payment[env, a] = ranked_payments[rank]


@device_jit
def reset_world(env, tid, nt, seed, ep, completions, auto_integrator, resource_maps, house_owner,
                locs, inventory, escrow, labor, build_payment, build_skill, bonus, coin_utility,
                utility, welfare, move_order, layout_maps, water, ranked_payments, ranked_locs,
                params, iparams):  # fmt: skip
    """``reference.reset_envs`` of one env (all threads, both barriers; no observations):
    the layout, the agents, their skills and coin, the placement, the baselines."""
    n, h, w = locs.shape[1], water.shape[0], water.shape[1]
    for p in range(tid, h * w, nt):
        r, c = p // w, p % w
        house_owner[env, r, c] = -1
        for j in range(resource_maps.shape[1]):
            resource_maps[env, j, r, c] = layout_maps[j, r, c]
    if tid < n:
        reset_agent(env, tid, seed, ep, locs, inventory, escrow, labor, build_payment, build_skill,
                    bonus, move_order, ranked_payments, ranked_locs, params, iparams)  # fmt: skip
        coin_utility[env, tid] = coin_utility_of(env, tid, inventory, escrow, params)
    cuda.syncthreads()
    if tid == 0:
        if iparams[I_FIXED] == 0:
            place_agents(env, seed, ep, locs, water)
        welfare[env] = baselines(env, completions, auto_integrator, inventory, escrow, labor,
                                 coin_utility, utility, params, iparams)  # fmt: skip
    cuda.syncthreads()


@device_jit
def build_and_order(env, tid, seed, ep, t, actions, inventory, labor, resource_maps, house_owner,
                    landmarks, locs, build_payment, move_order, params):  # fmt: skip
    """Build (agent ``tid``) and its slot of the move order; returns whether it built (no
    barrier: the caller's follows)."""
    n = locs.shape[1]
    built = False
    if tid < n:
        built = build_step(env, tid, actions[env, tid], inventory, labor, resource_maps,
                           house_owner, landmarks, locs, build_payment, params)  # fmt: skip
        move_order[env, rank_of(seed, ep, t, S_MOVE, tid, n)] = tid
    return built


@device_jit
def move_gather_regrow(env, tid, nt, seed, ep, t, start, actions, locs, inventory, labor,
                       house_owner, water, resource_maps, bonus, move_order, layout_maps,
                       regrow_cells, params):  # fmt: skip
    """The moves (actions from ``start``) in the order's slots, the collections and the
    regrowth of one env (all threads; no barrier after the regrowth)."""
    n = locs.shape[1]
    for slot in range(n):  # the order's slots one after the other
        if tid == move_order[env, slot]:
            move_agent_slot(env, tid, actions[env, tid], start, locs, labor, house_owner, water,
                            params)  # fmt: skip
        cuda.syncthreads()
    if tid < n:
        apply_gathers(env, tid, seed, ep, t, locs, inventory, labor, resource_maps, bonus, params)
    cuda.syncthreads()
    regrow_step(env, tid, nt, seed, ep, t, resource_maps, layout_maps, regrow_cells, params)


@device_jit
def finish_step(env, tid, t, refresh, _timestep_, _done_, completions, auto_integrator,
                inventory, escrow, labor, coin_utility, utility, welfare, rewards_a, rewards_p,
                episode_coin, episode_labor, episode_utility, params, iparams):  # fmt: skip
    """The coin utility of agent ``tid`` when ``refresh`` (its coin endowment changed), the
    rewards and the clock of one env (all threads, both barriers)."""
    if refresh:  # array_rewards.refresh_coin_utility
        coin_utility[env, tid] = coin_utility_of(env, tid, inventory, escrow, params)
    cuda.syncthreads()
    if tid == 0:
        step_rewards(env, t, completions, auto_integrator, inventory, escrow, labor, coin_utility,
                     utility, welfare, rewards_a, rewards_p, episode_coin, episode_labor,
                     episode_utility, _done_, params, iparams)  # fmt: skip
        _timestep_[env] = t
    cuda.syncthreads()


@device_jit
def market_layout(observations_a, observations_p, action_mask_a, n, side):
    """``(agent block, planner block, move start)`` of a world with a market (sizes of the
    arrays beyond the world's; ``(0, 0, 2)`` without one)."""
    mk = observations_a.shape[2] - N_FLAT - 9 * side * side
    mp = observations_p.shape[2] - 4 - 3 * n
    return mk, mp, action_mask_a.shape[2] - 4


@device_jit
def observe(env, tid, nt, t, observations_a, observations_p, action_mask_a, action_mask_p, locs,
            inventory, build_payment, build_skill, bonus, resource_maps, house_owner,
            layout_maps, water, landmarks, params, iparams):  # fmt: skip
    """``reference.observe`` of one env (all threads): the world's parts, around the market's
    blocks when the vectors have them."""
    side = 2 * iparams[I_RANGE] + 1
    mk, mp, start = market_layout(observations_a, observations_p, action_mask_a, locs.shape[1],
                                  side)  # fmt: skip
    observe_world(env, tid, nt, t, mk, 0, mp, 3, 0, start, observations_a, observations_p,
                  action_mask_a, locs, inventory, build_payment, build_skill, bonus,
                  resource_maps, house_owner, layout_maps, water, landmarks, params, iparams)  # fmt: skip
    if tid == locs.shape[1]:
        action_mask_p[env, 0, 0] = 1.0


@device_jit
def observe_world(env, tid, nt, t, mk, tx, mp, stride, pinv, start, observations_a,
                  observations_p, action_mask_a, locs, inventory, build_payment, build_skill,
                  bonus, resource_maps, house_owner, layout_maps, water, landmarks, params,
                  iparams):  # fmt: skip
    """The world's parts of the vectors and its agents' masks (all threads): the agents'
    flat features around the market's (``mk``) and the tax's (``tx``) blocks, their windows,
    the planner's row 0 from ``mp`` (``time``, its inventory, then per agent ``i`` its
    inventory at ``mp + 4 + stride * i + pinv``); moves from action ``start``."""
    n, h, w = locs.shape[1], water.shape[0], water.shape[1]
    rng_ = iparams[I_RANGE]
    side = 2 * rng_ + 1
    for p in range(tid, n * side * side, nt):
        write_window_cell(env, p, side, rng_, observations_a, mk + tx, locs, resource_maps,
                          house_owner, layout_maps, water)  # fmt: skip
    if tid < n:
        write_flat(env, tid, t, observations_a, mk, tx, locs, inventory, build_payment,
                   build_skill, bonus, params, h, w)  # fmt: skip
        action_mask_a[env, tid, 0] = 1.0
        ok = build_masks(env, tid, inventory, resource_maps, house_owner, landmarks, locs)
        action_mask_a[env, tid, 1] = 1.0 if ok else 0.0
        for m in range(1, 5):
            ok = move_masks(env, tid, m, locs, house_owner, water)
            action_mask_a[env, tid, start - 1 + m] = 1.0 if ok else 0.0
    if tid == n:
        inv = params[P_INV]
        observations_p[env, 0, mp] = t / params[P_TIME]
        for k in range(3):
            observations_p[env, 0, mp + 1 + k] = 0.0
        for i in range(n):
            for k in range(3):
                observations_p[env, 0, mp + 4 + stride * i + pinv + k] = inventory[env, i, k] * inv


@device_jit
def baselines(env, completions, auto_integrator, inventory, escrow, labor, coin_utility, utility,
              params, iparams):  # fmt: skip
    """``array_rewards.optimization_metrics``: the agents' utilities (returns the welfare)."""
    k = energy_weight(env, completions, auto_integrator, params, iparams) * params[P_ECOST]
    for i in range(inventory.shape[1]):
        utility[env, i] = coin_utility[env, i] - labor[env, i] * k
    return welfare_of(env, inventory, escrow, params)


@device_jit
def step_rewards(env, t, completions, auto_integrator, inventory, escrow, labor, coin_utility,
                 utility, welfare, rewards_a, rewards_p, episode_coin, episode_labor,
                 episode_utility, _done_, params, iparams):  # fmt: skip
    """``array_rewards.step_rewards`` of one env (one thread): the float64 utility and welfare
    changes (stored as float32 rewards), the new baselines, the auto-warmup integrator, done
    and the episode records."""
    n = inventory.shape[1]
    k = energy_weight(env, completions, auto_integrator, params, iparams) * params[P_ECOST]
    total = 0.0
    for i in range(n):
        new = coin_utility[env, i] - labor[env, i] * k
        diff = new - utility[env, i]
        rewards_a[env, i] = diff
        utility[env, i] = new
        total = total + diff
    new_welfare = welfare_of(env, inventory, escrow, params)
    rewards_p[env, 0] = new_welfare - welfare[env]
    welfare[env] = new_welfare
    if total > 0:
        auto_integrator[env] += 1
    if t >= iparams[I_LEN]:
        completions[env] += 1
        _done_[env] = 1
        for i in range(n):
            episode_coin[env, i] = inventory[env, i, 0] + escrow[env, i, 0]
            episode_labor[env, i] = labor[env, i]
            episode_utility[env, i] = utility[env, i]


@device_jit
def world_kernel(mode, _timestep_, _done_, env_seed, completions, auto_integrator, resource_maps,
                 house_owner, locs, inventory, escrow, labor, build_payment, build_skill,
                 bonus_gather_prob, coin_utility, utility, welfare, move_order, episode_coin,
                 episode_labor, episode_utility, observations_a, observations_p, action_mask_a,
                 action_mask_p, sampled_actions_a, sampled_actions_p, rewards_a, rewards_p,
                 layout_maps, water, landmarks, regrow_cells, ranked_payments, ranked_locs,
                 world_params, world_iparams):  # fmt: skip
    """The world's kernels (``mode`` 0: ``gtb_world_reset``, 1: ``gtb_world_step``; see the
    module docstring)."""
    env, tid, nt = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    if mode == RESET:  # gtb_world_reset
        if _timestep_[env] != 0:
            return
        reset_world(env, tid, nt, env_seed[env], completions[env], completions, auto_integrator,
                    resource_maps, house_owner, locs, inventory, escrow, labor, build_payment,
                    build_skill, bonus_gather_prob, coin_utility, utility, welfare, move_order,
                    layout_maps, water, ranked_payments, ranked_locs, world_params, world_iparams)  # fmt: skip
        t = 0
    else:  # gtb_world_step
        t = _timestep_[env] + 1
        seed, ep = env_seed[env], completions[env]
        built = build_and_order(env, tid, seed, ep, t, sampled_actions_a, inventory, labor,
                                resource_maps, house_owner, landmarks, locs, build_payment, move_order,
                                world_params)  # fmt: skip
        cuda.syncthreads()
        move_gather_regrow(env, tid, nt, seed, ep, t, 2, sampled_actions_a, locs, inventory, labor,
                           house_owner, water, resource_maps, bonus_gather_prob, move_order,
                           layout_maps, regrow_cells, world_params)  # fmt: skip
        finish_step(env, tid, t, built, _timestep_, _done_, completions, auto_integrator, inventory,
                    escrow, labor, coin_utility, utility, welfare, rewards_a, rewards_p, episode_coin,
                    episode_labor, episode_utility, world_params, world_iparams)  # fmt: skip
    observe(env, tid, nt, t, observations_a, observations_p, action_mask_a, action_mask_p, locs,
            inventory, build_payment, build_skill, bonus_gather_prob, resource_maps, house_owner,
            layout_maps, water, landmarks, world_params, world_iparams)  # fmt: skip


gtb_world_reset = field_kernel("gtb_world_reset", world_kernel, RESET)
gtb_world_step = field_kernel("gtb_world_step", world_kernel, STEP)
