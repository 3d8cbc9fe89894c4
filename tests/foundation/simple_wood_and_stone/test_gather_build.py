"""Gather and Build: hand-made moves, gathers and builds; water and masks."""

import numpy as np
import pytest
from gtb_world_helpers import action_index, components, place

LEFT, RIGHT, UP, DOWN = 1, 2, 3, 4


def move(env, agent, direction):
    return action_index(env, agent, "Gather", direction)


def build(env, agent):
    return action_index(env, agent, "Build", 1)


def test_moving_onto_a_wood_cell_gathers_one_unit(make_env):
    env = make_env()
    agent = place(env, 0, 0, 1)
    place(env, 1, 4, 4)
    env.step({"0": move(env, 0, LEFT)})
    assert agent.loc == [0, 0]
    assert agent.inventory["Wood"] == 1
    assert env.world.maps.get("Wood")[0, 0] == 0
    assert agent.endogenous["Labor"] == 2.0  # move 1 + collect 1
    gather = env.get_component("Gather").gathers[-1]
    assert gather == [{"agent": 0, "resource": "Wood", "n": 1, "loc": [0, 0]}]


def test_a_sure_bonus_gathers_two_units(make_env):
    env = make_env()
    agent = place(env, 0, 0, 4)
    agent.state["bonus_gather_prob"] = 1.0
    env.step({"0": move(env, 0, RIGHT)})
    assert agent.inventory["Stone"] == 2


def test_no_agent_walks_into_water_and_its_mask_says_so(make_env):
    env = make_env(check_action_masks=False)
    place(env, 1, 4, 4)
    agent = place(env, 0, 1, 2)
    mask = env.get_component("Gather").generate_masks()[0]
    assert mask.tolist() == [1, 1, 1, 0]  # left, right, up allowed; down is water
    env.step({"0": move(env, 0, DOWN)})
    assert agent.loc == [1, 2] and agent.endogenous["Labor"] == 0


def test_masks_exclude_the_map_edge_and_occupied_cells(make_env):
    env = make_env()
    place(env, 0, 0, 3)  # out of the way first
    place(env, 1, 4, 1)
    place(env, 0, 4, 0)
    masks = env.get_component("Gather").generate_masks()
    assert masks[0].tolist() == [0, 0, 1, 0]  # left: edge, right: agent 1, up: free, down: edge
    assert masks[1].tolist() == [0, 1, 1, 0]


def test_mark_allowed_moves_writes_ones_at_each_agents_start_only(make_env):
    env = make_env()
    place(env, 0, 0, 3)  # out of the way first
    place(env, 1, 4, 1)
    place(env, 0, 4, 0)
    out = [0.0] * 12
    env.get_component("Gather")._mark_allowed_moves(out, [7, 1])
    # agent 0 at (4, 0): only up (entry 2); agent 1 at (4, 1): right and up (entries 1, 2)
    assert out == [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    out = np.zeros(12, dtype=np.float32)
    env.get_component("Gather")._mark_allowed_moves(out, [0, 4])
    assert out.tolist() == [0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0]


def _reference_move_mask(env, i):
    """Agent i's move mask from the maps' arrays: on the map, unoccupied, accessible."""
    from ai_economist.foundation.components.move import MOVES

    maps, (h, w) = env.world.maps, env.world.world_size
    r, c = env.world.agents[i].state["loc"]
    ok = []
    for dr, dc in MOVES:
        rr, cc = r + dr, c + dc
        inside = 0 <= rr < h and 0 <= cc < w
        ok.append(inside and bool(maps.unoccupied[rr, cc]) and bool(maps.accessibility[i, rr, cc]))
    return np.array(ok, dtype=np.float32)


def test_move_masks_match_the_maps_at_every_cell_and_off_the_map(make_env):
    env = make_env()
    gather = env.get_component("Gather")
    place(env, 1, 0, 3)
    h, w = env.world.world_size
    checked = 0
    for r in range(h):
        for c in range(w):
            if (r, c) == (0, 3) or not env.world.maps.accessibility[0, r, c]:
                continue
            place(env, 0, r, c)
            for i in (0, 1):
                np.testing.assert_array_equal(
                    gather.generate_masks()[i], _reference_move_mask(env, i)
                )
            checked += 1
    assert checked > 20
    env.world.maps.clear_agent_loc(env.world.agents[0])
    env.world.agents[0].state["loc"] = [-1, -1]  # off the map: every move's target is off too
    assert gather.generate_masks()[0].tolist() == [0, 0, 0, 0]
    env.world.agents[0].state["loc"] = [0, -1]  # left of (0, 0): only the move right lands on it
    assert gather.generate_masks()[0].tolist() == _reference_move_mask(env, 0).tolist()


def test_random_play_never_puts_an_agent_on_water_or_on_another(make_env, rng):
    env = make_env(n_agents=4, episode_length=300, resource_regen_prob=0.05)
    obs = env._generate_observations()
    water = env.world.maps.get("Water") > 0
    for _ in range(300):
        actions = {k: int(rng.choice(np.flatnonzero(obs[k]["action_mask"]))) for k in "0123"}
        obs, _, done, _ = env.step(actions)
        locs = [tuple(a.loc) for a in env.world.agents]
        assert len(set(locs)) == 4
        assert not any(water[r, c] for r, c in locs)
        if done["__all__"]:
            break


def test_a_build_without_stone_is_masked_and_rejected(make_env):
    env = make_env()
    agent = place(env, 0, 3, 3, Wood=1, Stone=0)
    assert env.get_component("Build").generate_masks()[0].tolist() == [0]
    with pytest.raises(ValueError, match="masked out"):
        env.step({"0": build(env, 0)})
    assert agent.inventory["Wood"] == 1 and env.world.timestep == 0  # nothing happened


def test_a_masked_build_is_a_no_op_without_mask_checks(make_env):
    env = make_env(check_action_masks=False)
    agent = place(env, 0, 3, 3, Wood=1, Stone=0)
    env.step({"0": build(env, 0)})
    assert agent.inventory["Wood"] == 1 and agent.inventory["Coin"] == 0
    assert env.world.maps.get("House").sum() == 0


def test_a_build_pays_and_places_an_owned_house(make_env):
    env = make_env(comps=components(Build={"payment": 12}))
    agent = place(env, 0, 3, 3, Wood=2, Stone=1)
    _, rew, _, _ = env.step({"0": build(env, 0)})
    assert agent.inventory["Wood"] == 1 and agent.inventory["Stone"] == 0
    assert agent.inventory["Coin"] == 12 and agent.endogenous["Labor"] == 10
    assert env.world.maps.get("House")[3, 3] == 1
    assert env.world.maps.get("House", owner=True)[3, 3] == 0
    # the house keeps agent 1 out of (3, 3) but not its owner
    assert not env.world.maps.accessibility[1, 3, 3] and env.world.maps.accessibility[0, 3, 3]
    eta, cost = 0.23, 0.21
    utility = (12 ** (1 - eta) - 1) / (1 - eta) - cost * 10
    assert rew["0"] == pytest.approx(utility - (0 - 1) / (1 - eta))
    assert env.get_component("Build").get_metrics()["0/n_builds"] == 1
    # no second house on the same cell
    assert env.get_component("Build").generate_masks()[0].tolist() == [0]


def test_no_build_on_a_source_cell(make_env):
    env = make_env()
    env.world.maps.set("Wood", np.zeros((5, 6)))  # the wood is gone, its source block stays
    place(env, 0, 0, 0, Wood=1, Stone=1)
    assert env.get_component("Build").generate_masks()[0].tolist() == [0]


def test_pareto_skills_give_payments_between_payment_and_pmsm_times_it(make_env):
    env = make_env(
        n_agents=4,
        comps=components(Build={"skill_dist": "pareto", "payment_max_skill_multiplier": 3}),
    )
    pays = [a.state["build_payment"] for a in env.world.agents]
    assert all(10 <= p <= 30 for p in pays) and len(set(pays)) > 1


@pytest.mark.parametrize(
    "name, kwargs, match",
    [
        ("Build", {"payment": -1}, "payment"),
        ("Gather", {"skill_dist": "paretto"}, "did you mean 'pareto'"),
        ("ContinuousDoubleAuction", {"max_bid_ask": 0}, "max_bid_ask"),
        ("Gather", {"move_labor": -1.0}, "move_labor"),
    ],
)
def test_bad_component_arguments_name_the_argument(make_env, name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_env(comps=components(**{name: kwargs}))


@pytest.mark.parametrize(
    "kwargs",
    [{"flatten_masks": False}, {"multi_action_mode_agents": True}],
    ids=["unflattened masks", "multi-action agents"],
)
def test_masked_actions_are_rejected_in_every_mask_layout(make_env, kwargs):
    env = make_env(**kwargs)
    place(env, 1, 4, 4)
    agent = place(env, 0, 1, 2)  # water below
    if agent.multi_action_mode:
        down = [0 if name != "Gather" else DOWN for name in agent.action_names]
        up = [0 if name != "Gather" else UP for name in agent.action_names]
    else:
        down, up = {"Gather": DOWN}, {"Gather": UP}
    with pytest.raises(ValueError, match="'Gather' for agent 0 is masked out"):
        env.step({"0": down})
    env.step({"0": up})
    assert agent.loc == [0, 2]


def test_checkerboard_sources_and_a_regrowth_kernel():
    from ai_economist import foundation

    env = foundation.make_env_instance(
        "uniform/simple_wood_and_stone",
        components=components(),
        n_agents=2,
        world_size=[16, 16],
        checker_source_blocks=True,
        wood_regen_halfwidth=2,
        wood_regen_weight=1.0,
        seed=5,
    )
    env.reset()
    rows, cols = np.nonzero(env.world.maps.get("WoodSourceBlock"))
    assert rows.size > 0 and np.all((rows + cols) % 2 == 1)
    env.world.maps.set("Wood", np.zeros((16, 16)))
    for _ in range(30):  # each source regrows with its 5x5 neighbourhood's mean health
        env.scenario_step()
    regrown = env.world.maps.get("Wood")
    assert regrown.sum() > 0 and np.all(regrown[env.world.maps.get("WoodSourceBlock") == 0] == 0)
