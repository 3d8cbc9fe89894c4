"""Agent action spaces, action parsing, masks and inventories."""

import numpy as np
import pytest

from ai_economist.foundation.agents import BasicMobileAgent, BasicPlanner


class FakeComponent:
    """Minimal stand-in for a component: only what register_components reads."""

    def __init__(self, name, n_actions, fields=None):
        self.name = name
        self._n = n_actions
        self._fields = fields or {}

    def get_n_actions(self, agent_cls_name):
        return self._n.get(agent_cls_name) if isinstance(self._n, dict) else self._n

    def get_additional_state_fields(self, agent_cls_name):
        return dict(self._fields)


def make_agent(multi=False, cls=BasicMobileAgent):
    agent = cls(0, multi_action_mode=multi)
    agent.register_inventory(["Coin", "Wood"])
    agent.register_components(
        [
            FakeComponent("Move", 4, {"moves": 0}),
            FakeComponent("Idle", None),
            FakeComponent("Trade", [("Buy", 2), ("Sell", 3), ("Skip", 0)]),
        ]
    )
    return agent


def test_state_layout_and_registration():
    agent = make_agent()
    assert agent.state == {
        "loc": [0, 0],
        "inventory": {"Coin": 0, "Wood": 0},
        "escrow": {"Coin": 0, "Wood": 0},
        "endogenous": {},
        "moves": 0,
    }
    agent.register_endogenous(["Labor"])
    assert agent.endogenous == {"Labor": 0}
    assert agent.action_names == ["Move", "Trade.Buy", "Trade.Sell"]
    assert agent.subspace_sizes == [4, 2, 3]
    with pytest.raises(RuntimeError):
        agent.register_components([])


def test_single_action_mode_space_and_parsing():
    agent = make_agent()
    assert agent.action_spaces == 1 + 4 + 2 + 3
    assert agent.single_action_map[1] == ("Move", 1)
    assert agent.single_action_map[4] == ("Move", 4)
    assert agent.single_action_map[5] == ("Trade.Buy", 1)
    assert agent.single_action_map[9] == ("Trade.Sell", 3)
    agent.parse_actions(6)
    assert agent.action == {"Move": 0, "Trade.Buy": 2, "Trade.Sell": 0}
    assert agent.get_component_action("Trade") == [2, 0]
    assert agent.get_component_action("Trade", "Buy") == 2
    assert agent.get_component_action("Move") == 0
    assert agent.get_component_action("Nope") is None
    agent.parse_actions(np.int64(0))  # universal NO-OP leaves actions unchanged
    assert agent.action["Trade.Buy"] == 2
    agent.parse_actions({"Move": 3})
    assert agent.action["Move"] == 3
    agent.reset_actions("trade")
    assert agent.action == {"Move": 3, "Trade.Buy": 0, "Trade.Sell": 0}
    agent.reset_actions()
    assert set(agent.action.values()) == {0}


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (10, ValueError, "out of range"),
        (-1, ValueError, "out of range"),
        ("3", TypeError, "integer"),
        (1.5, TypeError, "integer"),
        ({"Move": 1, "Trade.Buy": 1}, ValueError, "at most one entry"),
        ({"Move": 5}, ValueError, "expected 0..4"),
        ({"Fly": 1}, KeyError, "Known sub-spaces"),
    ],
)
def test_single_mode_bad_actions(bad, exc, match):
    with pytest.raises(exc, match=match):
        make_agent().parse_actions(bad)


def test_multi_action_mode_space_and_parsing():
    agent = make_agent(multi=True)
    spaces = agent.action_spaces
    assert spaces.dtype == np.int32 and spaces.tolist() == [5, 3, 4]
    agent.parse_actions([4, 0, 3])
    assert agent.action == {"Move": 4, "Trade.Buy": 0, "Trade.Sell": 3}
    agent.set_component_action("Trade", [1, 2])
    assert agent.get_component_action("Trade") == [1, 2]
    with pytest.raises(ValueError, match="expects 3 actions"):
        agent.parse_actions([1, 2])
    with pytest.raises(ValueError, match="expected 0..2"):
        agent.parse_actions([0, 3, 0])
    with pytest.raises(TypeError, match="multi-action mode"):
        agent.parse_actions(1)
    with pytest.raises(ValueError, match="sequence of 2"):
        agent.set_component_action("Trade", 1)


def test_multi_mode_lists_resolve_alike_on_every_path():
    """Multi-mode actions as lists, tuples or arrays of ints, numpy ints or integral floats
    resolve to the same int writes; a bool, a fraction or an out-of-range entry is rejected."""
    agent = make_agent(multi=True)
    pairs = [("Move", 4), ("Trade.Buy", 0), ("Trade.Sell", 3)]
    assert agent.resolve_actions([4, 0, 3]) == pairs
    assert agent.resolve_actions((4, 0, 3)) == pairs
    assert agent.resolve_actions(np.array([4, 0, 3])) == pairs
    assert agent.resolve_actions([np.int64(4), 0, 3.0]) == pairs
    assert all(type(v) is int for _, v in agent.resolve_actions([np.int64(4), 0, 3.0]))
    for bad, error in (
        ([5, 0, 0], ValueError),
        ([0, -1, 0], ValueError),
        ([0, 0, 0.5], TypeError),
        ([True, 0, 0], TypeError),
    ):
        with pytest.raises(error):
            agent.resolve_actions(bad)


def test_passive_multi_mode_agent_gets_a_placeholder():
    agent = BasicMobileAgent(1, multi_action_mode=True)
    agent.register_components([FakeComponent("Idle", 0)])
    assert agent.action_names == ["PassiveAgentPlaceholder"]
    assert agent.action_spaces.tolist() == [1]
    agent.parse_actions([0])
    assert agent.flatten_masks({}).tolist() == [1.0]


def test_sub_space_names_may_not_contain_dots():
    agent = BasicMobileAgent(0)
    with pytest.raises(NameError):
        agent.register_components([FakeComponent("Trade", [("a.b", 2)])])


def test_flatten_masks_layouts():
    masks = {"Move": [1, 0, 1, 0], "Trade.Buy": np.array([0, 1]), "Trade.Sell": [1, 1, 0]}
    single = make_agent().flatten_masks(masks)
    assert single.dtype == np.float32
    assert single.tolist() == [1, 1, 0, 1, 0, 0, 1, 1, 1, 0]
    multi = make_agent(multi=True).flatten_masks(masks)
    assert multi.tolist() == [1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0]
    with pytest.raises(KeyError, match="Trade.Sell"):
        make_agent().flatten_masks({"Move": [1] * 4, "Trade.Buy": [1, 1]})


def test_random_actions_use_the_given_generator():
    agent = make_agent()
    with pytest.raises(RuntimeError, match="random generator"):
        agent.get_random_action()
    draws = [make_agent().get_random_action(np.random.default_rng(5)) for _ in range(2)]
    assert draws[0] == draws[1] and 0 <= draws[0] < 10
    agent.rng = np.random.default_rng(1)
    samples = {agent.get_random_action() for _ in range(300)}
    assert samples == set(range(10))
    multi = make_agent(multi=True)
    multi.rng = np.random.default_rng(2)
    multi.populate_random_actions()
    assert all(0 <= multi.action[k] < multi.action_dim[k] for k in multi.action)


def test_inventory_escrow_transfers_are_capped():
    agent = make_agent()
    agent.inventory["Coin"] = 5
    assert agent.inventory_to_escrow("Coin", 3) == 3.0
    assert agent.inventory_to_escrow("Coin", 10) == 2.0
    assert (agent.inventory["Coin"], agent.escrow["Coin"]) == (0, 5)
    assert agent.escrow_to_inventory("Coin", 4) == 4.0
    assert agent.escrow_to_inventory("Coin", 4) == 1.0
    assert agent.total_endowment("Coin") == 5
    with pytest.raises(ValueError, match=">= 0"):
        agent.inventory_to_escrow("Coin", -1)


def test_planner_has_no_location_and_idx_p():
    planner = BasicPlanner(idx=3)
    assert planner.idx == "p"
    assert "loc" not in planner.state
    with pytest.raises(AttributeError):
        _ = planner.loc
    assert not hasattr(planner, "loc")


def test_agent_idx_validation():
    with pytest.raises(TypeError):
        BasicMobileAgent(1.5)
    assert BasicMobileAgent(np.int64(2)).idx == 2
