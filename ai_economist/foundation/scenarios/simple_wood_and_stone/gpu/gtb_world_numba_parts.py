"""Device functions of the Numba kernels (``gtb_world_numba.py``): the counter-based draws
(:mod:`.rng`), the rules (:mod:`..array_rules`), rewards (:mod:`..array_rewards`) and
observations (:mod:`..array_obs`), each named after the numpy function it mirrors.

Integers are Python ints in the simulator and int64 on the device (the 32-bit hash multiplies
in 16-bit halves, so int64 never overflows); money and skills are float64, as in numpy.
"""

from __future__ import annotations

import math

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import rng
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.warp_drive.numba_index import index_divmod
from ai_economist.warp_drive.numba_loops import device_jit

MASK32, SEED_SALT, INV_2_24 = rng.MASK32, rng.SEED_SALT, rng.INV_2_24
HASH_M1, HASH_M2 = rng.HASH_M1, rng.HASH_M2
PLACEMENT_TRIES = rng.PLACEMENT_TRIES
S_PLACE, S_BUILD, S_GATHER_SKILL = (
    rng.STREAMS[k] for k in ("place", "build_skill", "gather_skill")
)
S_RANK, S_MOVE, S_GATHER, S_REGROW = (rng.STREAMS[k] for k in ("rank", "move_order", "gather", "regrow"))  # fmt: skip
P_REGEN, P_HEALTH, P_COIN0 = (
    gs.P[k] for k in ("regen_weight", "max_health", "starting_agent_coin")
)
P_PAY, P_PMSM, P_BLABOR = (gs.P[k] for k in ("payment", "payment_max_skill_multiplier", "build_labor"))  # fmt: skip
P_MLABOR, P_CLABOR, P_ETA = (gs.P[k] for k in ("move_labor", "collect_labor", "isoelastic_eta"))
P_ECOST, P_WARMUP, P_MIX = (gs.P[k] for k in ("energy_cost", "energy_warmup_constant", "mixing_weight_gini_vs_coin"))  # fmt: skip
P_INV, P_TIME = gs.P["inv_scale"], gs.P["time_scale"]
I_LEN, I_RANGE, I_BDIST, I_GDIST = (gs.I[k] for k in ("episode_length", "observation_range", "build_skill_dist", "gather_skill_dist"))  # fmt: skip
I_FIXED, I_AUTO = gs.I["fixed_four"], gs.I["energy_warmup_auto"]
N_FLAT = len(gs.AGENT_FLAT_KEYS)
MOVE_DR = (0, 0, 0, -1, 1)  # array_rules.MOVE_DR: stay, left, right, up, down
MOVE_DC = (0, -1, 1, 0, 0)


# ----------------------------------------------------------------------- draws (rng.py)
@device_jit
def mul32(x, c):
    return (x * (c & 0xFFFF) + (((x * (c >> 16)) & 0xFFFF) << 16)) & MASK32


@device_jit
def hash32(x):
    x = x ^ (x >> 16)
    x = mul32(x, HASH_M1)
    x = x ^ (x >> 15)
    x = mul32(x, HASH_M2)
    return x ^ (x >> 16)


@device_jit
def draw_bits(seed, episode, step, stream, index):
    h = hash32((int(seed) & MASK32) ^ SEED_SALT)
    h = hash32(h ^ (int(episode) & MASK32))
    h = hash32(h ^ (int(step) & MASK32))
    return hash32(h ^ (((int(stream) & 0xFF) << 24) | (int(index) & 0xFFFFFF)))


@device_jit
def uniform(seed, episode, step, stream, index):
    return float(draw_bits(seed, episode, step, stream, index) >> 8) * INV_2_24


@device_jit
def below(bits, n):
    return ((bits >> 8) * int(n)) >> 24


@device_jit
def skill_draw(seed, episode, stream, agent, dist, shape, mean, sigma):
    """``reference.skill_draws`` of one agent (dist 1 Pareto, 2 lognormal)."""
    u1 = uniform(seed, episode, 0, stream, 2 * agent)
    if dist == 1:
        return math.expm1(-math.log1p(-u1) / shape)
    u2 = uniform(seed, episode, 0, stream, 2 * agent + 1)
    z = math.sqrt(-2.0 * math.log1p(-u1)) * math.cos(2.0 * math.pi * u2)
    return math.exp(mean + sigma * z)


@device_jit
def rank_of(seed, episode, step, stream, agent, n):
    """Position of ``agent`` when the agents' keys are sorted (ties to the lower agent)."""
    key = draw_bits(seed, episode, step, stream, agent)
    rank = 0
    for j in range(n):
        other = draw_bits(seed, episode, step, stream, j)
        if other < key or (other == key and j < agent):
            rank += 1
    return rank


# ----------------------------------------------------------------------- rules
@device_jit
def occupied(locs, env, n, r, c):
    for j in range(n):
        if locs[env, j, 0] == r and locs[env, j, 1] == c:
            return True
    return False


@device_jit
def build_masks(env, a, inventory, resource_maps, house_owner, landmarks, locs):
    """``array_rules.build_masks`` of agent ``a``."""
    r, c = locs[env, a, 0], locs[env, a, 1]
    if not (inventory[env, a, 2] >= 1 and inventory[env, a, 1] >= 1):
        return False
    for j in range(resource_maps.shape[1]):
        if resource_maps[env, j, r, c] > 0:
            return False
    return house_owner[env, r, c] < 0 and landmarks[r, c] == 0


@device_jit
def move_masks(env, a, m, locs, house_owner, water):
    """``array_rules.move_masks`` of agent ``a``'s move ``m`` (1..4)."""
    r = locs[env, a, 0] + MOVE_DR[m]
    c = locs[env, a, 1] + MOVE_DC[m]
    if r < 0 or r >= water.shape[0] or c < 0 or c >= water.shape[1] or water[r, c] != 0:
        return False
    owner = house_owner[env, r, c]
    return (owner < 0 or owner == a) and not occupied(locs, env, locs.shape[1], r, c)


@device_jit
def build_step(env, a, action, inventory, labor, resource_maps, house_owner, landmarks, locs,
               build_payment, params):  # fmt: skip
    """``array_rules.build_step`` of agent ``a`` (each agent builds on its own cell, so all
    agents at once); returns whether it built."""
    if action != 1 or not build_masks(env, a, inventory, resource_maps, house_owner, landmarks,
                                      locs):  # fmt: skip
        return False
    inventory[env, a, 2] -= 1
    inventory[env, a, 1] -= 1
    inventory[env, a, 0] += build_payment[env, a]
    labor[env, a] += params[P_BLABOR]
    house_owner[env, locs[env, a, 0], locs[env, a, 1]] = a
    return True


@device_jit
def move_agent_slot(env, a, action, start, locs, labor, house_owner, water, params):
    """``array_rules.move_agent_slot`` for agent ``a``, whose slot of the order it is (the
    moves are the actions ``start .. start + 3``)."""
    m = action - start + 1 if action >= start else 0
    if m > 0 and move_masks(env, a, m, locs, house_owner, water):
        locs[env, a, 0] += MOVE_DR[m]
        locs[env, a, 1] += MOVE_DC[m]
        labor[env, a] += params[P_MLABOR]


@device_jit
def apply_gathers(env, a, seed, ep, t, locs, inventory, labor, resource_maps, bonus, params):
    """``array_rules.gather_events`` and ``apply_gathers`` of agent ``a`` (agents stand on
    distinct cells, so all agents at once)."""
    r, c = locs[env, a, 0], locs[env, a, 1]
    for j in range(resource_maps.shape[1]):
        if resource_maps[env, j, r, c] >= 1:
            u = uniform(seed, ep, t, S_GATHER, 2 * a + j)
            inventory[env, a, 1 + j] += 2.0 if u < bonus[env, a] else 1.0
            labor[env, a] += params[P_CLABOR]
            resource_maps[env, j, r, c] = max(resource_maps[env, j, r, c] - 1, 0.0)


@device_jit
def regrow_step(env, tid, nt, seed, ep, t, resource_maps, layout_maps, regrow_cells, params):
    """``array_rules.regrow_step``: the threads stride over the source cells."""
    h, w = layout_maps.shape[1], layout_maps.shape[2]
    for k in range(tid, regrow_cells.shape[0], nt):
        i = regrow_cells[k]
        j, cell = index_divmod(i, h * w)
        r, c = index_divmod(cell, w)
        before = float(resource_maps[env, j, r, c])
        p = max(before, float(layout_maps[j, r, c])) * params[P_REGEN]
        if uniform(seed, ep, t, S_REGROW, i) < p:
            resource_maps[env, j, r, c] = min(before + 1.0, params[P_HEALTH])


@device_jit
def coin_utility_of(env, a, inventory, escrow, params):
    """``array_rewards.coin_utilities`` of one agent's coin endowment."""
    e1 = 1.0 - params[P_ETA]
    return ((inventory[env, a, 0] + escrow[env, a, 0]) ** e1 - 1.0) / e1


@device_jit
def energy_weight(env, completions, auto_integrator, params, iparams):
    """``array_rewards.energy_weight`` of one env."""
    c = params[P_WARMUP]
    if c <= 0.0:
        return 1.0
    progress = auto_integrator[env] if iparams[I_AUTO] == 1 else completions[env]
    return 1.0 - math.exp(-float(progress) / c)


@device_jit
def welfare_of(env, inventory, escrow, params):
    """``coin_eq_times_productivity`` as ``array_rewards.optimization_metrics`` sums it."""
    n = inventory.shape[1]
    total = 0.0
    diff = 0.0
    for i in range(n):
        ci = inventory[env, i, 0] + escrow[env, i, 0]
        total = total + ci
        for j in range(n):
            diff = diff + abs(ci - (inventory[env, j, 0] + escrow[env, j, 0]))
    gini = diff / (2 * n * total + 1e-10) / ((n - 1) / n)
    w = 1.0 - params[P_MIX]
    return (w * (1.0 - gini) + 1.0 - w) * (total / n)


# ----------------------------------------------------------------------- observations
@device_jit
def write_flat(env, a, t, obs, mk, tx, locs, inventory, build_payment, build_skill, bonus,
               params, h, w):  # fmt: skip
    """The agent's ``flat`` features in ``state.AGENT_FLAT_KEYS`` order (float64 -> float32),
    those after ``Build-*`` behind the market's block of ``mk`` floats, those after
    ``Gather-*`` also behind the tax's block of ``tx`` floats (0 without a tax)."""
    pay = params[P_PAY]
    scale = pay if pay > 0 else 1.0
    inv = params[P_INV]
    obs[env, a, 0] = build_payment[env, a] / scale
    obs[env, a, 1] = build_skill[env, a]
    obs[env, a, mk + 2] = bonus[env, a]
    rest = mk + tx
    obs[env, a, rest + 3] = t / params[P_TIME]
    for k in range(3):
        obs[env, a, rest + 4 + k] = inventory[env, a, k] * inv
    obs[env, a, rest + 7] = locs[env, a, 1] / w
    obs[env, a, rest + 8] = locs[env, a, 0] / h


@device_jit
def write_window_cell(env, p, side, rng_, obs, mk, locs, resource_maps, house_owner, layout,
                      water):  # fmt: skip
    """Window cell ``p`` (agent-major) of ``array_obs.egocentric_maps``: 7 map channels and
    the owner and location index channels (after the flat features and the market's ``mk``)."""
    cells = side * side
    a, cell = index_divmod(p, cells)
    dr, dc = index_divmod(cell, side)
    r = locs[env, a, 0] - rng_ + dr
    c = locs[env, a, 1] - rng_ + dc
    base = N_FLAT + mk + cell
    idx_base = base + 7 * cells
    inside = 0 <= r < water.shape[0] and 0 <= c < water.shape[1]
    if not inside:
        for ch in range(7):
            obs[env, a, base + ch * cells] = 0.0
        obs[env, a, idx_base] = 0.0
        obs[env, a, idx_base + cells] = 0.0
        return
    owner = house_owner[env, r, c]
    obs[env, a, base] = resource_maps[env, 0, r, c]
    obs[env, a, base + cells] = resource_maps[env, 1, r, c]
    obs[env, a, base + 2 * cells] = 1.0 if owner >= 0 else 0.0
    obs[env, a, base + 3 * cells] = water[r, c]
    obs[env, a, base + 4 * cells] = 1.0 if layout[0, r, c] > 0 else 0.0
    obs[env, a, base + 5 * cells] = 1.0 if layout[1, r, c] > 0 else 0.0
    obs[env, a, base + 6 * cells] = 1.0
    obs[env, a, idx_base] = 0 if owner < 0 else (1 if owner == a else owner + 2)
    code = 0
    for j in range(locs.shape[1]):
        if locs[env, j, 0] == r and locs[env, j, 1] == c:
            code = 1 if j == a else j + 2
    obs[env, a, idx_base + cells] = code
