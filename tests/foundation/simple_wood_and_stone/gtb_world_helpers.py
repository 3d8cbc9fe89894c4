"""Helpers for the gather-trade-build tests: a small hand-made world and its actions."""

from __future__ import annotations

# 5 x 6: wood at (0, 0), stone at (0, 5), a water wall on row 2 with a gap at column 5.
SMALL_LAYOUT = "W    S;      ;@@@@@ ;      ;      ;"


def components(**overrides):
    """Build, Trade and Gather with deterministic defaults (no skills)."""
    spec = {
        "Build": {"payment": 10, "skill_dist": "none", "build_labor": 10.0},
        "ContinuousDoubleAuction": {"max_bid_ask": 10, "order_duration": 50, "max_num_orders": 5},
        "Gather": {"move_labor": 1.0, "collect_labor": 1.0, "skill_dist": "none"},
    }
    for name, kwargs in overrides.items():
        spec[name].update(kwargs)
    return [{name: kwargs} for name, kwargs in spec.items()]


def place(env, agent_idx, r, c, **inventory):
    """Move an agent to (r, c) and set inventory entries; refresh the masks."""
    agent = env.world.agents[agent_idx]
    env.world.maps.clear_agent_loc(agent)
    agent.state["loc"] = [-1, -1]
    assert env.world.set_agent_loc(agent, r, c) == [r, c]
    agent.state["inventory"].update(inventory)
    env._generate_observations()  # masks of the new state
    return agent


def action_index(env, agent_idx, sub_space, local):
    """Global single-mode action index of ``(sub_space, local)``."""
    agent = env.world.agents[agent_idx]
    return next(g for g, t in agent.single_action_map.items() if t == (sub_space, local))


def total_coin(env):
    return sum(a.total_endowment("Coin") for a in env.world.agents)
