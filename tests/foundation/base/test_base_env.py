"""BaseEnvironment: construction, reset/step contract, observations, masks, collation."""

import numpy as np
import pytest

from ai_economist.foundation.agents import BasicMobileAgent
from ai_economist.foundation.base.base_agent import agent_registry
from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.base.base_env import BaseEnvironment, scenario_registry

N_AGENTS = 3


@component_registry.add
class TbeMove(BaseComponent):
    """Mobile agents move right (1) or down (2)."""

    name = "TbeMove"
    component_type = "Move"
    agent_subclasses = ["BasicMobileAgent"]
    required_entities = ["Wood"]

    def __init__(self, *args, bonus=0, **kwargs):
        super().__init__(*args, **kwargs)
        self.bonus = bonus
        self.seen_timesteps = []
        self.events = []

    def get_n_actions(self, agent_cls_name):
        return 2 if agent_cls_name == "BasicMobileAgent" else None

    def get_additional_state_fields(self, agent_cls_name):
        return {"moves": 0, "trail": []} if agent_cls_name == "BasicMobileAgent" else {}

    def _target(self, agent, action):
        r, c = agent.loc
        return (r, c + 1) if action == 1 else (r + 1, c)

    def component_step(self):
        self.seen_timesteps.append(self.world.timestep)
        for agent in self.world.agents:
            action = agent.get_component_action(self.name)
            if action:
                target = self._target(agent, action)
                if self.world.set_agent_loc(agent, *target) == list(target):
                    agent.state["moves"] += 1
                    agent.state["trail"].append(list(target))
                    self.events.append({"agent": agent.idx, "to": list(target)})

    def generate_observations(self):
        return {a.idx: {"moves": a.state["moves"]} for a in self.world.agents}

    def generate_masks(self, completions=0):
        return {
            a.idx: np.array([self.world.can_agent_occupy(*self._target(a, k), a) for k in (1, 2)])
            for a in self.world.agents
        }

    def additional_reset_steps(self):
        self.events = []
        self.world.call_log.append("TbeMove.additional_reset_steps")

    def get_metrics(self):
        return {"total_moves": sum(a.state["moves"] for a in self.world.agents)}

    def get_dense_log(self):
        return self.events


@component_registry.add
class TbeTax(BaseComponent):
    """Planner-only component with two action sub-spaces."""

    name = "TbeTax"
    agent_subclasses = ["BasicPlanner"]
    required_entities = ["Coin"]

    def __init__(self, *args, agentwise=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.agentwise = agentwise
        self.rates = []

    def get_n_actions(self, agent_cls_name):
        return [("rate", 3), ("bonus", 2)] if agent_cls_name == "BasicPlanner" else None

    def get_additional_state_fields(self, agent_cls_name):
        return {}

    def component_step(self):
        self.rates.append(self.world.planner.get_component_action(self.name, "rate"))

    def generate_observations(self):
        obs = {"p": {"rate": self.rates[-1] if self.rates else 0}}
        if self.agentwise:
            for a in self.world.agents:
                obs[f"p{a.idx}"] = {"coin": a.inventory["Coin"], "loc": np.array(a.loc)}
        return obs

    def generate_masks(self, completions=0):
        return {"p": {"rate": np.array([1, 0, 1]), "bonus": np.array([0, 1])}}

    def get_dense_log(self):
        return {"rates": self.rates}


@component_registry.add
class TbeCollated(BaseComponent):
    """Returns collated ("a") observations and masks."""

    name = "TbeCollated"
    agent_subclasses = ["BasicMobileAgent"]
    required_entities = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.vec = np.arange(2 * self.n_agents, dtype=float).reshape(2, self.n_agents)
        self.mask = np.zeros((3, self.n_agents))
        self.mask[1] = 1
        self.seen_actions = []

    def get_n_actions(self, agent_cls_name):
        return 3 if agent_cls_name == "BasicMobileAgent" else None

    def get_additional_state_fields(self, agent_cls_name):
        return {}

    def component_step(self):
        self.seen_actions.append(self.get_agent_actions().tolist())

    def generate_observations(self):
        return {"a": {"vec": self.vec}, "p": {"vec_sum": float(self.vec.sum())}}

    def generate_masks(self, completions=0):
        return {"a": self.mask}


@scenario_registry.add
class TbeScenario(BaseEnvironment):
    """Agents start at (i, 0); each step every agent finds 0-2 coins (drawn from env.rng)."""

    name = "tbe-scenario"
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    required_entities = ["Water"]

    def __init__(self, *args, collated_outputs=False, **kwargs):
        self.collated_outputs = collated_outputs
        super().__init__(*args, **kwargs)
        self.world.call_log = []

    def reset_starting_layout(self):
        self.world.call_log.append("reset_starting_layout")
        self.world.maps.set_point("Water", 0, self.world_size[1] - 1, 1)

    def reset_agent_states(self):
        self.world.call_log.append("reset_agent_states")
        self.world.clear_agent_locs()
        for agent in self.world.agents:
            agent.state["inventory"]["Coin"] = 0
            self.world.set_agent_loc(agent, agent.idx, 0)

    def additional_reset_steps(self):
        self.world.call_log.append("scenario.additional_reset_steps")

    def scenario_step(self):
        for agent, found in zip(self.world.agents, self.world.rng.integers(0, 3, self.n_agents)):
            agent.state["inventory"]["Coin"] += int(found)

    def _coins(self):
        return np.array([a.inventory["Coin"] for a in self.world.agents], dtype=float)

    def generate_observations(self):
        total = float(self._coins().sum())
        planner = {"total": total, "grid": np.zeros((2, 2))}
        if self.collated_outputs:
            locs = np.array([a.loc for a in self.world.agents]).T
            return {"a": {"coin": self._coins(), "loc": locs}, "p": planner}
        obs = {
            a.idx: {"coin": a.inventory["Coin"], "loc": np.array(a.loc)} for a in self.world.agents
        }
        obs[self.world.planner.idx] = planner
        return obs

    def compute_reward(self):
        if self.collated_outputs:
            return {"a": self._coins(), "p": self._coins().sum()}
        rew = {a.idx: a.inventory["Coin"] for a in self.world.agents}
        rew["p"] = float(self._coins().sum())
        return rew

    def scenario_metrics(self):
        return {"total_coin": float(self._coins().sum())}


_DEFAULT = object()


def make_env(components=_DEFAULT, **kwargs):
    config = dict(
        components=[("TbeMove", {}), {"TbeTax": {}}] if components is _DEFAULT else components,
        n_agents=N_AGENTS,
        world_size=[4, 5],
        episode_length=4,
        seed=3,
    )
    config.update(kwargs)
    return TbeScenario(**config)


# ------------------------------------------------------------------ construction
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"n_agents": 1}, ValueError, "n_agents must be an int >= 2, got 1"),
        ({"n_agents": "3"}, TypeError, "n_agents"),
        ({"n_agents": None}, TypeError, "n_agents"),
        ({"world_size": [5]}, TypeError, "world_size"),
        ({"world_size": [5, 0]}, ValueError, r"world_size\[1\]"),
        ({"episode_length": 0}, ValueError, "episode_length must be an int >= 1, got 0"),
        ({"episode_length": 2.5}, TypeError, "episode_length"),
        ({"components": None}, TypeError, "components must be a list"),
        ({"components": [{"TbeMove": {}, "TbeTax": {}}]}, ValueError, "one-key dict"),
        ({"components": [("TbeMove",)]}, TypeError, r"components\[0\]"),
        ({"components": [("TbeMove", 3)]}, TypeError, "kwargs must be a dict"),
        ({"components": [("Nope", {})]}, KeyError, "Known entries"),
        ({"components": [("TbeMove", {}), ("TbeMove", {})]}, ValueError, "more than once"),
        ({"components": [("TbeMove", {"nope": 1})]}, TypeError, "nope"),
        ({"dense_log_frequency": 0}, ValueError, "dense_log_frequency"),
        ({"world_dense_log_frequency": None}, TypeError, "world_dense_log_frequency"),
        ({"seed": -1}, ValueError, "seed must be an int >= 0"),
        ({"seed": 1.0}, TypeError, "seed"),
        ({"flatten_observations": "yes"}, TypeError, "flatten_observations must be a bool"),
        ({"multi_action_mode_agents": 2}, TypeError, "multi_action_mode_agents"),
        ({"collate_agent_step_and_reset_data": None}, TypeError, "collate_agent"),
    ],
)
def test_constructor_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_env(**kwargs)


def test_unknown_required_entity_raises_keyerror():
    class BadScenario(TbeScenario):
        name = "tbe-bad"
        required_entities = ["Unobtainium"]

    with pytest.raises(KeyError, match="Unobtainium.*Known resources"):
        BadScenario(components=[], n_agents=2, world_size=[2, 2], episode_length=1)


@agent_registry.add
class TbeSpecialAgent(BasicMobileAgent):
    name = "TbeSpecialAgent"


def test_scenario_class_attribute_checks():
    class NoName(TbeScenario):
        name = ""

    class Nested(TbeScenario):
        name = "tbe-nested"
        agent_subclasses = ["BasicMobileAgent", "TbeSpecialAgent"]

    class UnknownAgent(TbeScenario):
        name = "tbe-unknown-agent"
        agent_subclasses = ["Robot"]

    kwargs = dict(components=[], n_agents=2, world_size=[2, 2])
    with pytest.raises(ValueError, match="non-empty name"):
        NoName(**kwargs)
    with pytest.raises(TypeError, match="TbeSpecialAgent is a subclass of BasicMobileAgent"):
        Nested(**kwargs)
    with pytest.raises(KeyError, match="Robot"):
        UnknownAgent(**kwargs)


def test_entities_agents_and_properties():
    env = make_env(allow_observation_scaling=False)
    assert env.resources == ["Coin", "Wood"]
    assert env.landmarks == ["Water"]
    assert env.endogenous == ["Labor"]
    assert env.num_agents == N_AGENTS + 1
    assert env.inv_scale == 1.0 and make_env().inv_scale == 0.01
    assert [a.idx for a in env.all_agents] == [0, 1, 2, "p"]
    agent = env.get_agent("1")
    assert agent is env.get_agent(1) and env.get_agent("p") is env.world.planner
    assert agent.inventory == {"Coin": 0, "Wood": 0} and agent.endogenous == {"Labor": 0}
    assert agent.state["moves"] == 0 and agent.state["trail"] == []
    assert env.world.planner.endogenous == {}
    assert env.get_component("Move") is env.get_component("TbeMove")
    assert [c.name for c in env.components] == ["TbeMove", "TbeTax"]
    assert env.get_component("TbeMove").inv_scale == 1.0
    with pytest.raises(KeyError, match="Known components"):
        env.get_component("Build")
    with pytest.raises(KeyError, match="expected 0..2 or 'p'"):
        env.get_agent(7)
    assert env.world.maps.keys() == ["Wood", "Water", "WoodSourceBlock"]


def test_component_kwargs_are_forwarded():
    env = make_env(components=[{"TbeMove": {"bonus": 4}}])
    assert env.get_component("TbeMove").bonus == 4
    assert env.get_component("TbeMove").episode_length == 4


# ---------------------------------------------------------------- reset / step
def test_reset_order_and_state_reset_values():
    env = make_env()
    env.reset()
    env.get_agent(0).state["trail"].append("x")
    env.world.call_log.clear()
    env.reset()
    assert env.world.call_log == [
        "reset_starting_layout",
        "reset_agent_states",
        "TbeMove.additional_reset_steps",
        "scenario.additional_reset_steps",
    ]
    trails = [a.state["trail"] for a in env.world.agents]
    assert trails == [[], [], []]
    assert trails[0] is not trails[1]  # fresh copies per agent
    assert env.world.timestep == 0


def test_flattened_observations_hand_computed():
    env = make_env()
    obs = env.reset()
    assert sorted(obs) == ["0", "1", "2", "p"]
    agent1 = obs["1"]
    assert sorted(agent1) == ["action_mask", "flat", "time"]
    # sorted keys: TbeMove-moves, time, world-coin, world-loc
    assert agent1["flat"].dtype == np.float32
    assert agent1["flat"].tolist() == [0, 0, 0, 1, 0]
    assert agent1["time"].tolist() == [0.0]
    planner = obs["p"]
    assert sorted(planner) == ["action_mask", "flat", "time", "world-grid"]
    assert planner["flat"].tolist() == [0, 0, 0]  # TbeTax-rate, time, world-total
    assert planner["world-grid"].shape == (2, 2)


def test_unflattened_observations_have_prefixes_and_time():
    env = make_env(flatten_observations=False, flatten_masks=False)
    obs = env.reset()
    assert sorted(obs["0"]) == ["TbeMove-moves", "action_mask", "time", "world-coin", "world-loc"]
    assert sorted(obs["p"]) == ["TbeTax-rate", "action_mask", "time", "world-grid", "world-total"]
    assert obs["0"]["action_mask"]["TbeMove"].dtype == np.uint8
    assert obs["0"]["action_mask"]["TbeMove"].tolist() == [1, 0]  # (1,0) holds agent 1
    assert obs["2"]["action_mask"]["TbeMove"].tolist() == [1, 1]
    assert {k: v.tolist() for k, v in obs["p"]["action_mask"].items()} == {
        "TbeTax.rate": [1, 0, 1],
        "TbeTax.bonus": [0, 1],
    }


@pytest.mark.parametrize(
    "mm_agents, mm_planner, agent0_mask, planner_mask",
    [
        (False, True, [1, 1, 0], [1, 1, 0, 1, 1, 0, 1]),
        (False, False, [1, 1, 0], [1, 1, 0, 1, 0, 1]),
        (True, False, [1, 1, 0], [1, 1, 0, 1, 0, 1]),
    ],
)
def test_mask_layouts(mm_agents, mm_planner, agent0_mask, planner_mask):
    env = make_env(multi_action_mode_agents=mm_agents, multi_action_mode_planner=mm_planner)
    obs = env.reset()
    assert obs["0"]["action_mask"].dtype == np.float32
    assert obs["0"]["action_mask"].tolist() == agent0_mask
    assert obs["p"]["action_mask"].tolist() == planner_mask
    spaces = env.world.planner.action_spaces
    assert (spaces.tolist() if mm_planner else spaces) == ([4, 3] if mm_planner else 6)


def test_step_contract_and_action_keys():
    env = make_env()
    env.reset()
    obs, rew, done, info = env.step({0: 1, "1": 1, "p": [2, 1]})
    assert env.get_agent(0).loc == [0, 1] and env.get_agent(1).loc == [1, 1]
    assert env.get_agent(2).loc == [2, 0]  # left out: NO-OP
    assert env.get_component("TbeTax").rates == [2]
    assert obs["0"]["flat"][0] == 1  # moves
    assert obs["0"]["flat"][1] == pytest.approx(0.25)  # time = 1/4
    assert set(rew) == {"0", "1", "2", "p"}
    assert rew["p"] == sum(rew[k] for k in "012")
    assert done == {"__all__": False}
    assert info == {"0": {}, "1": {}, "2": {}, "p": {}}
    assert all(v == 0 for a in env.all_agents for v in a.action.values())  # reset to NO-OP
    for _ in range(3):
        obs, rew, done, info = env.step()
    assert done == {"__all__": True}
    assert env.get_component("TbeMove").seen_timesteps == [1, 2, 3, 4]


def test_time_without_scaling():
    env = make_env(allow_observation_scaling=False, flatten_observations=False)
    env.reset()
    obs = env.step()[0]
    assert obs["0"]["time"].tolist() == [1.0]


@pytest.mark.parametrize(
    "actions, exc, match",
    [
        ({0: 3}, ValueError, "out of range"),
        ({9: 1}, KeyError, "No agent with idx 9"),
        ({"p": [1]}, ValueError, "expects 2 actions"),
        ([1, 2], TypeError, "dict keyed by agent idx"),
        ({"a": np.zeros(2, int)}, ValueError, r"shape \(3,\)"),
    ],
)
def test_bad_actions(actions, exc, match):
    env = make_env()
    env.reset()
    with pytest.raises(exc, match=match):
        env.step(actions)


def test_set_agent_component_action_and_metrics():
    env = make_env()
    env.reset()
    env.set_agent_component_action(2, "TbeMove", 1)
    env.step()
    assert env.get_agent(2).loc == [2, 1]
    metrics = env.metrics
    assert metrics["Move/total_moves"] == 1
    assert metrics["total_coin"] == sum(a.inventory["Coin"] for a in env.world.agents)
    assert env.previous_episode_metrics is None
    for _ in range(3):
        env.step()
    assert env.previous_episode_metrics == env.metrics


def test_agentwise_planner_observations():
    env = make_env(components=[("TbeMove", {}), ("TbeTax", {"agentwise": True})])
    obs = env.reset()
    assert obs["p"]["p1"].tolist() == [0, 1, 0]  # coin, loc row, loc col
    env_u = make_env(
        components=[("TbeMove", {}), ("TbeTax", {"agentwise": True})], flatten_observations=False
    )
    obs_u = env_u.reset()
    assert obs_u["p"]["p2"]["TbeTax-coin"] == 0
    assert obs_u["p"]["p2"]["TbeTax-loc"].tolist() == [2, 0]


def test_environment_never_touches_the_global_rng():
    before = np.random.get_state()
    env = make_env(episode_length=6)
    env.reset()
    for _ in range(6):
        env.step({str(i): int(env.rng.integers(3)) for i in range(N_AGENTS)})
    after = np.random.get_state()
    assert np.array_equal(before[1], after[1]) and before[2:] == after[2:]


def test_seed_recreates_the_stream():
    def coins(env):
        env.reset()
        for _ in range(4):
            env.step()
        return [a.inventory["Coin"] for a in env.world.agents]

    env = make_env(seed=11)
    first = coins(env)
    env.seed(11)
    assert coins(env) == first
    assert coins(make_env(seed=11)) == first
    assert env.rng is env.world.rng
    with pytest.raises(ValueError, match="seed"):
        env.seed(-3)


# ------------------------------------------------------------------- collation
def collated_pair(**kwargs):
    comps = [("TbeMove", {}), ("TbeTax", {}), ("TbeCollated", {})]
    plain = make_env(components=comps, **kwargs)
    collated = make_env(components=comps, collate_agent_step_and_reset_data=True, **kwargs)
    return plain, collated


def test_collated_stacking_matches_per_agent_observations():
    plain, collated = collated_pair(flatten_observations=False)
    obs_p, obs_c = plain.reset(), collated.reset()
    actions = {"0": 1, "1": 2, "2": 5, "p": [1, 0]}
    obs_p, rew_p, _, info_p = plain.step(actions)
    obs_c, rew_c, done_c, info_c = collated.step(actions)
    assert sorted(obs_c) == ["a", "p"]
    for key in ("world-coin", "world-loc", "TbeMove-moves", "TbeCollated-vec", "time"):
        stacked = np.stack([np.asarray(obs_p[str(i)][key]) for i in range(N_AGENTS)], axis=-1)
        if key == "time":  # per-agent (1,) -> collated (n_agents,)
            stacked = stacked[0]
        assert np.array_equal(obs_c["a"][key], stacked), key
    assert obs_c["a"]["world-loc"].shape == (2, N_AGENTS)
    assert obs_c["a"]["time"].shape == (N_AGENTS,)
    assert obs_c["p"]["time"].shape == (1,)
    # masks: ones row + TbeMove (2) + TbeCollated (3), agents on the last axis
    mask = obs_c["a"]["action_mask"]
    assert mask.shape == (6, N_AGENTS) and mask.dtype == np.float32
    assert np.array_equal(mask, np.stack([obs_p[str(i)]["action_mask"] for i in range(3)], -1))
    assert mask[0].tolist() == [1, 1, 1] and mask[3:].tolist() == [[0, 0, 0], [1, 1, 1], [0, 0, 0]]
    assert obs_c["p"]["action_mask"].ndim == 1
    assert rew_c["a"].dtype.kind == "f" and rew_c["a"].shape == (N_AGENTS,)
    assert rew_c["a"].tolist() == [rew_p[str(i)] for i in range(N_AGENTS)]
    assert isinstance(rew_c["p"], float) and rew_c["p"] == rew_p["p"]
    assert info_c == {"a": {"0": {}, "1": {}, "2": {}}, "p": {}}
    assert done_c == {"__all__": False}


def test_collated_outputs_pass_through_untouched():
    _, env = collated_pair(flatten_observations=False, flatten_masks=False)
    comp = env.get_component("TbeCollated")
    obs = env.reset()
    assert obs["a"]["TbeCollated-vec"] is comp.vec
    assert obs["a"]["action_mask"]["TbeCollated"].tolist() == comp.mask.astype(np.uint8).tolist()
    assert obs["a"]["action_mask"]["TbeMove"].shape == (2, N_AGENTS)
    assert obs["p"]["TbeCollated-vec_sum"] == comp.vec.sum()


def test_collated_action_array_equals_per_agent_actions():
    _, env_a = collated_pair()
    _, env_b = collated_pair()
    env_a.reset(), env_b.reset()
    # single-action layout per agent: 0 NO-OP, 1-2 TbeMove, 3-5 TbeCollated
    env_a.step({"a": np.array([1, 4, 0]), "p": [0, 2]})
    env_b.step({"0": 1, 1: 4, "p": [0, 2]})
    assert env_a.get_component("TbeCollated").seen_actions == [[0, 2, 0]]
    assert (
        env_a.get_component("TbeCollated").seen_actions
        == env_b.get_component("TbeCollated").seen_actions
    )
    assert [a.loc for a in env_a.world.agents] == [a.loc for a in env_b.world.agents]
    with pytest.raises(ValueError, match="out of range"):
        env_a.step({"a": np.array([0, 6, 0])})
    with pytest.raises(TypeError, match="integers"):
        env_a.step({"a": np.array([0.5, 0, 0])})


def test_collated_scenario_outputs_and_flattening():
    env = make_env(
        components=[("TbeMove", {}), ("TbeTax", {})],
        collate_agent_step_and_reset_data=True,
        collated_outputs=True,
    )
    obs = env.reset()
    # per-agent fields: TbeMove-moves, time, world-coin, world-loc (2) -> flat (5, n_agents)
    assert obs["a"]["flat"].shape == (5, N_AGENTS) and obs["a"]["flat"].dtype == np.float32
    assert obs["a"]["flat"][4].tolist() == [0, 0, 0]  # loc columns
    assert obs["a"]["flat"][3].tolist() == [0, 1, 2]  # loc rows
    assert obs["a"]["time"].shape == (N_AGENTS,)
    _, rew, _, _ = env.step({"a": np.zeros(N_AGENTS, dtype=np.int32)})
    assert rew["a"].shape == (N_AGENTS,) and isinstance(rew["p"], float)


def test_uncollated_env_splits_collated_outputs():
    env = make_env(
        components=[("TbeMove", {}), ("TbeCollated", {})],
        collated_outputs=True,
        flatten_observations=False,
    )
    obs = env.reset()
    comp = env.get_component("TbeCollated")
    assert obs["1"]["TbeCollated-vec"].tolist() == comp.vec[:, 1].tolist()
    assert obs["2"]["world-loc"].tolist() == [2, 0]
    # NO-OP, TbeMove [right free, down blocked by agent 2], TbeCollated column 1
    assert obs["1"]["action_mask"].tolist() == [1, 1, 0, 0, 1, 0]
    _, rew, _, _ = env.step()
    assert set(rew) == {"0", "1", "2", "p"}
