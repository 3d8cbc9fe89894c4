"""Direct-path writers of the gather-trade-build scenario's observations.

:func:`scenario_observation_writer` is ``WoodAndStoneBase.observation_writer`` (see
``base/direct_obs.py``): the same values as ``WoodAndStoneBase.generate_observations``
written into the step's flat buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.simple_wood_and_stone import dynamics


def scenario_observation_writer(env: Any, slots: Any) -> Any:
    """The writer for ``env`` (a ``WoodAndStoneBase``) with egocentric windows; None with
    full observability (that configuration keeps the general path)."""
    if env._full_observability:
        return None
    world, spatial = env.world, env._planner_gets_spatial_info
    agents, planner = world.agents, world.planner
    res = list(agents[0].inventory)
    p_res = list(planner.inventory)
    names = env._inventory_names
    kept = []
    for a in agents:
        key = str(a.idx)
        kept.append((slots.kept(key, "map"), slots.kept(key, "idx_map")))
        slots.scalars([(key, "loc-row"), (key, "loc-col")] + [(key, names[r]) for r in res])
    slots.scalars([(planner.idx, names[r]) for r in p_res])
    p_kept = (slots.kept("p", "map"), slots.kept("p", "idx_map")) if spatial else None
    for a in agents:
        key = "p" + str(a.idx)
        loc = [(key, "loc-row"), (key, "loc-col")] if spatial else []
        slots.scalars([(key, names[r]) for r in res] + loc)
    n_res = len(res)
    agent_keys = [str(a.idx) for a in agents]
    codes = [a.idx + 2 for a in agents]
    tables = dynamics.own_code_tables(len(agents))  # agent i's code i + 2 -> 1
    if codes != list(range(2, len(agents) + 2)):
        return None  # the tables take agent i to be world.agents[i]
    per_agent = list(zip(agents, agent_keys, tables, kept))

    def write(buf: np.ndarray, scalars: list, outs: dict) -> None:
        h, w = env.world_size
        r, scale = env._mobile_agent_observation_range, env.inv_scale
        padded, padded_idx = env._padded_maps(r)
        locs = [a.state["loc"] for a in agents]
        loc_channel = padded_idx[-1]
        for code, (row, col) in zip(codes, locs):
            loc_channel[row + r, col + r] = code
        side = 2 * r + 1
        rows = []
        # each window as dynamics.egocentric_views_table gives it, without its list
        for (a, key, table, (k_map, k_idx)), (row, col) in zip(per_agent, locs):
            out = outs[key]
            out[k_map] = padded[:, row : row + side, col : col + side]
            out[k_idx] = table.take(padded_idx[:, row : row + side, col : col + side])
            inv = a.state["inventory"]
            values = [row / h, col / w]
            for k in res:
                values.append(inv[k] * scale)
            scalars.extend(values)
            rows.append(values)
        inv = planner.state["inventory"]
        scalars.extend([inv[k] * scale for k in p_res])
        if p_kept is not None:  # the planner's full maps, from the same caches
            outs["p"][p_kept[0]] = env._map_state()
            # = agent_idx_maps(owner_state, loc_map): the padded maps' middle
            outs["p"][p_kept[1]] = padded_idx[:, r : r + h, r : r + w].copy()
        for values in rows:
            scalars.extend(values[2:] + values[:2] if spatial else values[2 : 2 + n_res])

    return write
