"""Maps and World: layers, accessibility, ownership, occupancy and random ordering."""

import numpy as np
import pytest

from ai_economist.foundation.base.maps import Maps
from ai_economist.foundation.base.world import World


def make_world(seed=0, n_agents=3, size=(4, 5)):
    return World(
        list(size),
        n_agents,
        ["Coin", "Stone", "Wood"],
        ["House", "Water"],
        rng=np.random.default_rng(seed),
    )


def test_map_layers_in_insertion_order():
    maps = Maps((4, 5), 2, ["Coin", "Stone", "Wood"], ["House", "Water"])
    assert maps.keys() == ["Stone", "Wood", "House", "Water", "StoneSourceBlock", "WoodSourceBlock"]
    state = maps.state
    assert state.shape == (6, 4, 5) and state.dtype == np.float32
    assert maps.owner_state.shape == (1, 4, 5)
    assert maps.owner_state.dtype == np.int16 and np.all(maps.owner_state == -1)
    assert maps.empty.all()
    assert maps.accessibility.shape == (2, 4, 5) and maps.accessibility.all()


def test_set_clamps_and_rejects_bad_shapes():
    maps = Maps((2, 2), 2, ["Wood"], [])
    maps.set("Wood", np.array([[1.0, -3.0], [0.5, 2.0]]))
    assert maps.get("Wood").tolist() == [[1.0, 0.0], [0.5, 2.0]]
    maps.set_add("Wood", np.ones((2, 2)))
    assert maps.get("Wood").tolist() == [[2.0, 1.0], [1.5, 3.0]]
    with pytest.raises(ValueError, match="shape"):
        maps.set("Wood", np.zeros((3, 3)))
    with pytest.raises(KeyError, match="Known maps"):
        maps.get("Stone")
    assert maps.location_resources(0, 0) == {"Wood": 2.0}
    assert maps.location_landmarks(0, 0) == {}


def test_blocking_set_point_only_changes_that_cell():
    maps = Maps((3, 3), 2, ["Coin"], ["Water"])
    maps.set_point("Water", 1, 1, 1)
    acc = maps.accessibility
    assert not acc[:, 1, 1].any()
    assert acc.sum() == 2 * 8  # every other cell stays accessible (1.7.1 bug broadcast it)
    maps.set_point("Water", 0, 2, 1)
    assert not maps.accessibility[:, 0, 2].any() and not maps.accessibility[:, 1, 1].any()
    maps.set_point("Water", 1, 1, 0)
    assert maps.accessibility[:, 1, 1].all()
    assert maps.accessibility.sum() == 2 * 8
    with pytest.raises(ValueError):
        maps.accessibility[0, 0, 0] = False  # cached array is read-only


def test_blocking_full_set_updates_accessibility():
    maps = Maps((2, 2), 2, ["Coin"], ["Water"])
    maps.set("Water", np.array([[0, 1], [0, 0]]))
    assert maps.accessibility[:, 0, 1].tolist() == [False, False]
    assert maps.accessibility.sum() == 6
    assert maps.location_landmarks(0, 1) == {"Water": 1.0}


def test_private_landmark_ownership_and_accessibility():
    maps = Maps((2, 3), 3, ["Coin"], ["House"])
    maps.set_point("House", 0, 1, 1, owner=2)
    assert maps.get("House", owner=True)[0, 1] == 2
    assert maps.get_point("House", 0, 1) == 1.0
    assert maps.accessibility[:, 0, 1].tolist() == [False, False, True]
    assert maps.is_accessible(0, 1, 2) and not maps.is_accessible(0, 1, 0)
    with pytest.raises(ValueError, match="owned by agent 2"):
        maps.set_point("House", 0, 1, 1, owner=0)
    with pytest.raises(ValueError, match="needs owner"):
        maps.set_point("House", 0, 0, 1)
    maps.set_point_add("House", 0, 1, -1, owner=2)  # health 0 -> unowned, accessible again
    assert maps.get("House", owner=True)[0, 1] == -1
    assert maps.accessibility[:, 0, 1].all()


def test_private_full_set():
    maps = Maps((1, 3), 2, ["Coin"], ["House"])
    maps.set("House", {"owner": np.array([[1, 0, 0]]), "health": np.array([[1.0, 0.0, 2.0]])})
    assert maps.get("House", owner=True).tolist() == [[1, -1, 0]]
    assert maps.accessibility.tolist() == [[[False, True, True]], [[True, True, False]]]
    with pytest.raises(TypeError):
        maps.set("House", np.zeros((1, 3)))
    with pytest.raises(ValueError, match="set_add"):
        maps.set_add("House", np.zeros((1, 3)))
    with pytest.raises(ValueError, match="Owners"):
        maps.set("House", {"owner": np.array([[-1, 0, 0]]), "health": np.ones((1, 3))})


def test_state_dict_is_a_copy():
    maps = Maps((1, 2), 2, ["Wood"], ["House"])
    snap = maps.state_dict
    snap["Wood"][0, 0] = 5
    snap["House"]["owner"][0, 0] = 1
    assert maps.get("Wood")[0, 0] == 0 and maps.get("House", owner=True)[0, 0] == -1


def test_occupancy_and_agent_locations():
    world = make_world()
    a0, a1 = world.agents[0], world.agents[1]
    assert world.set_agent_loc(a0, 1, 1) == [1, 1]
    assert not world.maps.unoccupied[1, 1]
    assert not world.can_agent_occupy(1, 1, a1)
    assert world.set_agent_loc(a1, 1, 1) == a1.loc  # refused: occupied
    assert world.set_agent_loc(a0, 2, 3) == [2, 3]
    assert world.maps.unoccupied[1, 1] and not world.maps.unoccupied[2, 3]
    assert world.set_agent_loc(a0, 9, 9) == [2, 3]  # off the map: refused
    world.maps.set_point("Water", 3, 0, 1)
    assert a1.loc == [0, 0]  # default location, never placed
    assert world.set_agent_loc(a1, 3, 0) == [0, 0]  # water blocks: unchanged
    world.set_agent_loc(a1, 0, 1)
    world.set_agent_loc(world.agents[2], 3, 4)
    loc_map = world.loc_map
    assert loc_map[2, 3] == 0 and loc_map[0, 1] == 1 and loc_map[3, 4] == 2
    assert (loc_map >= 0).sum() == 3
    assert world.agent_locs_are_valid()
    world.clear_agent_locs()
    assert all(agent.loc == [-1, -1] for agent in world.agents)
    assert world.maps.unoccupied.all()
    assert (world.loc_map == -1).all()  # invalid locs are skipped
    assert not world.agent_locs_are_valid()


def test_create_landmark_and_consume_resource():
    world = make_world()
    world.maps.set_point("Wood", 2, 2, 3)
    world.consume_resource("Wood", 2, 2)
    assert world.location_resources(2, 2) == {"Wood": 2.0}
    world.create_landmark("House", 1, 0, agent_idx=1)
    assert world.location_landmarks(1, 0) == {"House": 1.0}
    assert world.is_location_accessible(1, 0, world.agents[1])
    assert not world.is_location_accessible(1, 0, world.agents[0])
    assert not world.is_location_accessible(-1, 0, world.agents[1])
    assert world.location_resources(-1, 0) == {}


def test_agents_planner_and_flags():
    world = World([2, 2], 2, ["Coin"], [], multi_action_mode_agents=True)
    assert [a.idx for a in world.agents] == [0, 1]
    assert world.planner.idx == "p"
    assert world.agents[0].multi_action_mode and world.planner.multi_action_mode
    assert "loc" not in world.planner.state
    with pytest.raises(AttributeError):
        _ = world.planner.loc
    assert world.timestep == 0 and world.use_cuda is False
    assert world.cuda_function_manager is None and world.cuda_data_manager is None


def test_random_order_uses_the_world_generator_only():
    global_state = np.random.get_state()
    orders_a = [
        [a.idx for a in make_world(7, n_agents=6).get_random_order_agents()] for _ in range(2)
    ]
    world_b = make_world(7, n_agents=6)
    order_b = [a.idx for a in world_b.get_random_order_agents()]
    assert orders_a[0] == orders_a[1] == order_b
    assert sorted(order_b) == list(range(6))
    expected = np.random.default_rng(7).permutation(6).tolist()
    assert order_b == expected
    after = np.random.get_state()
    assert after[0] == global_state[0] and np.array_equal(after[1], global_state[1])


def test_rng_setter_propagates_and_validates():
    world = make_world()
    new = np.random.default_rng(3)
    world.rng = new
    assert world.rng is new and all(a.rng is new for a in world.agents + [world.planner])
    with pytest.raises(TypeError, match="Generator"):
        world.rng = np.random.RandomState(0)


@pytest.mark.parametrize("n_agents", [1, 2, 4, 9])
def test_random_order_is_the_generators_permutation_draw_for_draw(n_agents):
    world = make_world(3, n_agents=n_agents)
    reference = np.random.default_rng(3)
    for _ in range(300):
        order = [a.idx for a in world.get_random_order_agents()]
        assert order == reference.permutation(n_agents).tolist()
    assert world.rng.random() == reference.random()  # the same number of draws
