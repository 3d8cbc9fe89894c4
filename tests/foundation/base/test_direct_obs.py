"""The direct observation and mask paths (base/direct_obs.py, base/direct_masks.py) give
exactly what the general path gives, and are used only where every source offers them."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.base.direct_obs import SourceSlots, trusted_writer
from ai_economist.foundation.components.build import Build
from ai_economist.foundation.scenarios.simple_wood_and_stone import configs

GTB = "layout_from_file/simple_wood_and_stone"


def make(name: str = GTB, phase: dict | None = None, **overrides):
    kwargs = configs.env_config(phase or configs.PHASE2_ENV_CONFIG)
    if name.startswith("uniform/"):
        for key in ("env_layout_file", "fixed_four_skill_and_loc"):
            kwargs.pop(key)
    kwargs.update(seed=3, dense_log_frequency=None, episode_length=120, **overrides)
    return foundation.make_env_instance(name, **kwargs)


def general(env):
    """``env`` held on the general path (merge + flatten, components' mask dicts)."""
    env._direct = False
    env._masks._direct = False
    return env


def assert_same(a, b, where=""):
    """Equal dicts (same keys in the same order), types, dtypes, shapes and values."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, tuple):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b), where
        x, y = np.asarray(a), np.asarray(b)
        assert x.dtype == y.dtype and x.shape == y.shape, where
        assert np.array_equal(x, y), where


def random_valid_actions(obs, env, rng):
    actions = {}
    for agent in env.all_agents:
        key = str(agent.idx)
        mask = obs[key]["action_mask"]
        if not agent.multi_action_mode:
            actions[key] = int(rng.choice(np.flatnonzero(mask)))
            continue
        picks, start = [], 0
        for n in agent.action_spaces:
            picks.append(int(rng.choice(np.flatnonzero(mask[start : start + n]))))
            start += n
        actions[key] = picks
    return actions


def run_both(fast, slow, steps, seed=0):
    rng = np.random.default_rng(seed)
    houses = 0
    obs_fast, obs_slow = fast.reset(), slow.reset()
    assert_same(obs_fast, obs_slow, "reset")
    for t in range(steps):
        actions = random_valid_actions(obs_fast, fast, rng)
        out_fast, out_slow = fast.step(actions), slow.step(actions)
        assert_same(out_fast, out_slow, f"step {t}")
        obs_fast = out_fast[0]
        houses = max(houses, int((fast.world.maps.get("House") > 0).sum()))
        if out_fast[2]["__all__"]:
            obs_fast = fast.reset()
            assert_same(obs_fast, slow.reset(), f"reset after step {t}")
    return houses


def test_phase2_direct_paths_match_the_general_path_over_random_steps():
    fast, slow = make(), general(make())
    houses = run_both(fast, slow, 300)  # 2.5 episodes of 120 steps: resets and tax days
    assert houses >= 2  # owned cells in the index maps were covered too
    assert fast._direct and fast._masks._direct  # the fast paths were used


@pytest.mark.parametrize(
    "name, overrides",
    [("uniform/simple_wood_and_stone", {}), (GTB, {"planner_gets_spatial_info": False})],
)
def test_other_configs_match_the_general_path(name, overrides):
    fast, slow = make(name, **overrides), general(make(name, **overrides))
    run_both(fast, slow, 60, seed=1)
    assert fast._direct and fast._masks._direct


def test_full_observability_keeps_the_general_observation_path():
    fast, slow = make(full_observability=True), general(make(full_observability=True))
    run_both(fast, slow, 20)
    assert fast._direct is False  # the scenario's writer covers egocentric windows only


def test_phase1_tax_free_masks_keep_the_general_path():
    fast = make(phase=configs.PHASE1_ENV_CONFIG)
    slow = general(make(phase=configs.PHASE1_ENV_CONFIG))
    run_both(fast, slow, 30)
    assert fast._direct


class OwnObservationsBuild(Build):
    """A user's Build that changes only the observations: must not get Build's writer."""

    name = "OwnObservationsBuild"

    def generate_observations(self):
        return {a.idx: {"double_skill": 2 * self.sampled_skills[a.idx]} for a in self.world.agents}


def test_a_subclass_overriding_only_generate_observations_keeps_the_general_path():
    assert trusted_writer(Build(*_component_args()))
    assert not trusted_writer(OwnObservationsBuild(*_component_args()))
    assert trusted_writer(OwnObservationsBuild(*_component_args()), "mask_writer", "generate_masks")


def _component_args():
    env = make()
    return env.world, env.episode_length


def test_source_slots_refuse_unknown_twice_claimed_and_wrong_kind_fields():
    plan = {"0": {"a": (0, 0, 1), "v": (1, 1, 3), "m": (2, "x-m", 0)}}
    slots = SourceSlots("x-", plan, {"0": 10})
    slots.scalars([("0", "a")])
    assert slots.scalar_positions == [10]
    assert slots.positions("0", "v").tolist() == [11, 12]
    assert not slots.complete
    with pytest.raises(KeyError, match="'a'.*claimed twice"):
        slots.scalars([("0", "a")])
    with pytest.raises(KeyError, match="'nope'"):
        slots.positions("0", "nope")
    with pytest.raises(ValueError, match="kept"):
        SourceSlots("x-", plan, {"0": 0}).positions("0", "m")
    assert slots.kept("0", "m") == "x-m"
    assert slots.complete


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_rebuild_the_direct_paths_for_their_own_objects(how):
    import copy
    import pickle

    env = make()
    obs = env.reset()
    rng = np.random.default_rng(2)
    for _ in range(5):
        obs = env.step(random_valid_actions(obs, env, rng))[0]
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    assert twin._direct is None and twin._masks._direct is None  # not the original's writers
    for _ in range(20):
        actions = random_valid_actions(obs, env, rng)
        out, out_twin = env.step(actions), twin.step(actions)
        assert_same(out, out_twin)
        obs = out[0]
    assert twin._direct._sources[0] is twin and twin._masks._direct


def _even_agents_may_build(agent):
    return agent.idx % 2 == 0


def test_the_build_mask_writer_asks_a_replaced_build_rule():
    envs = make(), general(make())
    for env in envs:
        build = next(c for c in env._components if isinstance(c, Build))
        build.agent_can_build = _even_agents_may_build  # on the instance
    run_both(*envs, 20)
    obs = envs[0].step({})[0]
    assert [obs[str(i)]["action_mask"][1] for i in range(4)] == [1, 0, 1, 0]  # build: slot 1
    assert envs[0]._masks._direct


def _arrays(tree, where=""):
    """Every ndarray of a nested observation dict, with its path."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _arrays(v, f"{where}/{k}")
    elif isinstance(tree, np.ndarray):
        yield where, tree


def test_direct_observations_are_disjoint_and_kept_by_later_steps():
    """No two returned arrays share memory (but the map windows) and a later step
    leaves the arrays of an earlier one as they were."""
    env = make()
    rng = np.random.default_rng(5)
    obs = env.reset()
    for _ in range(30):
        held = env.step(random_valid_actions(obs, env, rng))[0]
        arrays = list(_arrays(held))
        for i, (where, a) in enumerate(arrays):
            for other, b in arrays[i + 1 :]:
                # the agents' map windows may overlap: views of the cached padded maps,
                # which are never edited (map_cache.py), as on the general path
                windows = where.endswith("world-map") and other.endswith("world-map")
                assert windows or not np.shares_memory(a, b), (where, other)
        snapshot = [(where, a.copy()) for where, a in arrays]
        obs = env.step(random_valid_actions(held, env, rng))[0]
        for (where, a), (_, before) in zip(arrays, snapshot):
            assert np.array_equal(a, before), where
    assert env._direct and env._masks._direct
