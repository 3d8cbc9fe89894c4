"""The one-pass merge + flatten and the direct mask writer give exactly the two-pass
observations and masks, and step aside for anything they have not learned."""

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.base.observations import write_slot
from ai_economist.foundation.scenarios.simple_wood_and_stone import configs


def gtb_env(seed):
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG)
    kwargs.update(dense_log_frequency=None, episode_length=60, seed=seed)
    return foundation.make_env_instance(configs.SCENARIO_NAME, **kwargs)


def assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):
            assert_same(a[key], b[key])
        else:
            x, y = np.asarray(a[key]), np.asarray(b[key])
            assert x.dtype == y.dtype and x.shape == y.shape, key
            assert np.array_equal(x, y), key


def test_fused_observations_equal_the_two_pass_ones_over_random_play():
    fused, plain = gtb_env(3), gtb_env(3)
    plain._fused = None
    plain._masks._writer = None
    obs_f, obs_p = fused.reset(), plain.reset()
    rng = np.random.default_rng(0)
    used = 0
    for _ in range(60):
        assert_same(obs_f, obs_p)
        actions = {k: int(rng.choice(np.flatnonzero(obs_f[k]["action_mask"]))) for k in "0123"}
        used += fused._fused._plans is not None
        obs_f, rew_f, _, _ = fused.step(actions)
        obs_p, rew_p, _, _ = plain.step(actions)
        assert rew_f == rew_p
    assert used == 60  # the fused path was active after the first observation


def test_a_changed_field_falls_back_to_the_two_pass_error():
    env = gtb_env(1)
    env.reset()
    build = env.get_component("Build")
    original = build.generate_observations
    build.generate_observations = lambda: {k: {**v, "extra": 1.0} for k, v in original().items()}
    with pytest.raises(ValueError, match="changed"):
        env.step({})


def test_a_missing_sub_space_mask_falls_back_to_the_general_error():
    env = gtb_env(1)
    env.reset()
    trade = env.get_component("Trade")
    original = trade.generate_masks

    def without_sell_wood(completions=0):
        masks = original(completions)
        for m in masks.values():
            m.pop("Sell_Wood")
        return masks

    trade.generate_masks = without_sell_wood
    with pytest.raises(KeyError, match="No action mask for sub-space"):
        env.step({})


def test_write_slot_fills_its_slice_and_refuses_a_scalar_for_a_vector():
    flat = np.zeros(4, dtype=np.float32)
    assert write_slot(flat, (0, 1, True), 2.5) and write_slot(flat, (1, 2, True), np.ones(1))
    assert write_slot(flat, (2, 4, False), [3, 4])
    assert not write_slot(flat, (2, 4, False), 7.0)  # would broadcast: nothing written
    assert flat.tolist() == [2.5, 1.0, 3.0, 4.0]


def test_a_changed_key_type_or_value_kind_gives_the_two_pass_observations():
    fused, plain = gtb_env(2), gtb_env(2)
    plain._fused = None
    plain._masks._writer = None
    for env in (fused, plain):
        env.reset()
        env.step({})  # the fused path has learned the layout (int agent keys from Build)
        build = env.get_component("Build")
        original = build.generate_observations

        def str_keys_and_arrays(original=original):
            obs = original()
            return {str(k): {f: np.array([v]) for f, v in o.items()} for k, o in obs.items()}

        build.generate_observations = str_keys_and_arrays
    for _ in range(3):
        obs_f, _, _, _ = fused.step({})
        obs_p, _, _, _ = plain.step({})
        assert_same(obs_f, obs_p)
    assert fused._fused._plans is not None  # re-learned with the new key type
