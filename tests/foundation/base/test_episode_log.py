"""Dense logs, replay logs, seeding determinism and episode-log files."""

import builtins
import json

import numpy as np
import pytest

from ai_economist.foundation import utils
from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.base.base_env import BaseEnvironment, scenario_registry


@component_registry.add
class TelLottery(BaseComponent):
    """Action 1 buys a ticket: pays 1 Wood, wins 0..3 Coin drawn from world.rng."""

    name = "TelLottery"
    component_type = "Lottery"
    agent_subclasses = ["BasicMobileAgent"]
    required_entities = ["Wood"]

    def get_n_actions(self, agent_cls_name):
        return 1 if agent_cls_name == "BasicMobileAgent" else None

    def get_additional_state_fields(self, agent_cls_name):
        return {"tickets": 0} if agent_cls_name == "BasicMobileAgent" else {}

    def additional_reset_steps(self):
        self.draws = []

    def component_step(self):
        for agent in self.world.get_random_order_agents():
            if agent.get_component_action(self.name):
                prize = int(self.world.rng.integers(0, 4))
                agent.state["tickets"] += 1
                agent.inventory["Coin"] += prize
                self.draws.append({"agent": agent.idx, "prize": prize})

    def generate_observations(self):
        return {a.idx: {"tickets": a.state["tickets"]} for a in self.world.agents}

    def get_metrics(self):
        return {"n_draws": len(self.draws)}

    def get_dense_log(self):
        return self.draws


@component_registry.add
class TelLedger(BaseComponent):
    """Passive; its dense log is a dict."""

    name = "TelLedger"
    agent_subclasses = ["BasicPlanner"]
    required_entities = []

    def get_n_actions(self, agent_cls_name):
        return None

    def get_additional_state_fields(self, agent_cls_name):
        return {}

    def component_step(self):
        pass

    def generate_observations(self):
        return {}

    def get_dense_log(self):
        return {"steps": np.arange(self.world.timestep)}


@scenario_registry.add
class TelScenario(BaseEnvironment):
    name = "tel-scenario"
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    required_entities = []

    def reset_starting_layout(self):
        self.world.maps.set("Wood", self.world.rng.random(self.world_size))

    def reset_agent_states(self):
        self.world.clear_agent_locs()
        for agent in self.world.agents:
            agent.state["inventory"]["Coin"] = int(self.world.rng.integers(0, 10))
            self.world.set_agent_loc(agent, 0, agent.idx)

    def scenario_step(self):
        self.world.maps.set_add("Wood", 0.1 * self.world.rng.random(self.world_size))

    def generate_observations(self):
        return {a.idx: {"coin": a.inventory["Coin"]} for a in self.world.agents}

    def compute_reward(self):
        rew = {a.idx: float(a.inventory["Coin"]) for a in self.world.agents}
        rew["p"] = float(sum(rew.values()))
        return rew

    def scenario_metrics(self):
        return {"coin": sum(a.inventory["Coin"] for a in self.world.agents)}


def make_env(**kwargs):
    config = dict(
        components=[("TelLottery", {}), ("TelLedger", {})],
        n_agents=3,
        world_size=[3, 4],
        episode_length=5,
        world_dense_log_frequency=2,
        seed=0,
    )
    config.update(kwargs)
    return TelScenario(**config)


def run_episode(env, policy_seed=99, **reset_kwargs):
    policy = np.random.default_rng(policy_seed)
    trace = [env.reset(**reset_kwargs)["0"]["flat"].tolist()]
    done = {"__all__": False}
    while not done["__all__"]:
        actions = {str(i): int(policy.integers(0, 2)) for i in range(env.n_agents)}
        obs, rew, done, _ = env.step(actions)
        trace.append((obs["0"]["flat"].tolist(), rew))
    return trace


def test_dense_log_structure():
    env = make_env()
    run_episode(env, force_dense_logging=True)
    log = env.previous_episode_dense_log
    assert set(log) == {"world", "states", "actions", "rewards", "Lottery", "TelLedger-steps"}
    assert len(log["world"]) == len(log["states"]) == 6  # 5 steps + final
    assert len(log["actions"]) == len(log["rewards"]) == 5
    # snapshots at t = 0, 2, 4 (world_dense_log_frequency=2) and at the end
    assert [bool(w) for w in log["world"]] == [True, False, True, False, True, True]
    assert np.array(log["world"][0]["Wood"]).shape == (3, 4)
    assert set(log["states"][0]) == {"0", "1", "2", "p"}
    assert all(set(a) <= {"TelLottery"} for step in log["actions"] for a in step.values())
    n_tickets = sum(len(step[k]) for step in log["actions"] for k in step)
    assert n_tickets == sum(log["states"][-1][k]["tickets"] for k in "012")
    assert len(log["Lottery"]) == n_tickets
    assert log["TelLedger-steps"] == [0, 1, 2, 3, 4]
    assert log["rewards"][-1]["p"] == pytest.approx(sum(log["rewards"][-1][k] for k in "012"))
    json.dumps(log)  # JSON-able
    assert env.previous_episode_metrics["Lottery/n_draws"] == n_tickets


def test_default_masks_allow_everything():
    obs = make_env().reset()
    assert obs["0"]["action_mask"].tolist() == [1, 1]  # NO-OP + the lottery ticket
    assert obs["p"]["action_mask"].tolist() == [1]  # passive multi-action planner
    masks = make_env().get_component("TelLottery").generate_masks()
    assert sorted(masks) == [0, 1, 2] and masks[0].tolist() == [1.0]
    assert make_env().get_component("TelLedger").generate_masks() == {}


def test_dense_log_frequency_and_non_logged_episodes():
    env = make_env(dense_log_frequency=2)
    logged = []
    for _ in range(3):
        run_episode(env)
        logged.append(len(env.previous_episode_dense_log["states"]) > 0)
    assert logged == [True, False, True]
    plain = make_env()
    run_episode(plain)
    assert plain.previous_episode_dense_log == {
        "world": [],
        "states": [],
        "actions": [],
        "rewards": [],
    }


def test_same_seed_same_episode_and_replay_log():
    env_a, env_b = make_env(seed=5), make_env(seed=5)
    assert run_episode(env_a) == run_episode(env_b)
    assert env_a.previous_episode_replay_log == env_b.previous_episode_replay_log
    assert run_episode(make_env(seed=6)) != run_episode(make_env(seed=5))


def test_replay_reproduces_an_episode_on_another_env():
    env = make_env(seed=21)
    run_episode(env, force_dense_logging=True)
    replay = env.previous_episode_replay_log
    original = env.previous_episode_dense_log
    json.dumps(replay)
    assert replay["reset"]["seed_state"]["bit_generator"] == "PCG64"
    assert len(replay["step"]) == 5
    other = make_env(seed=1234)
    other.reset(force_dense_logging=True, **replay["reset"])
    for entry in replay["step"]:
        other.step(**entry)
    assert other.previous_episode_dense_log["states"] == original["states"]
    assert other.previous_episode_dense_log["rewards"] == original["rewards"]
    assert other.previous_episode_dense_log["world"] == original["world"]


def test_replay_log_is_immune_to_caller_buffer_reuse():
    env = make_env(collate_agent_step_and_reset_data=True)
    env.reset()
    buffer = np.array([1, 1, 1])
    env.step({"a": buffer})
    buffer[:] = 0
    assert env.replay_log["step"][0]["actions"]["a"].tolist() == [1, 1, 1]


def test_seed_state_validation_and_restore():
    env = make_env()
    env.reset()
    state = env.rng.bit_generator.state
    first = env.reset(seed_state=state)["0"]["flat"].tolist()
    assert env.replay_log["reset"]["seed_state"] == state
    env.rng.random(5)
    assert env.reset(seed_state=state)["0"]["flat"].tolist() == first
    env.step({"0": 1}, seed_state=state)
    assert env.replay_log["step"][0]["seed_state"] == state
    mt_state = np.random.Generator(np.random.MT19937(3)).bit_generator.state
    env.reset(seed_state=mt_state)  # another bit generator type is installed
    assert type(env.rng.bit_generator).__name__ == "MT19937"
    assert env.world.agents[0].rng is env.rng
    with pytest.raises(TypeError, match="5-tuple"):
        env.reset(seed_state=np.random.get_state())
    with pytest.raises(ValueError, match="Unknown bit generator"):
        env.reset(seed_state={"bit_generator": "Nope"})


@pytest.mark.parametrize("suffix", [".json", ".json.gz", ".lz4"])
def test_save_load_roundtrip(tmp_path, suffix):
    if suffix == ".lz4":
        pytest.importorskip("lz4")
    env = make_env()
    run_episode(env, force_dense_logging=True)
    path = tmp_path / f"episode{suffix}"
    utils.save_episode_log(env, path, compression_level=100)  # level is clamped
    assert utils.load_episode_log(path) == env.previous_episode_dense_log
    utils.save_episode_log({"x": np.arange(3)}, str(path))
    assert utils.load_episode_log(str(path)) == {"x": [0, 1, 2]}
    with pytest.raises(TypeError):
        utils.save_episode_log(42, path)


def test_lz4_missing_names_the_extra(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("lz4"):
            raise ImportError("No module named 'lz4'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r'pip install "ai-economist\[logs\]"'):
        utils.save_episode_log({"a": 1}, tmp_path / "log.lz4")
    with pytest.raises(ImportError, match="logs"):
        utils.load_episode_log(tmp_path / "log.lz4")
