"""benchmarks/learning_analysis.py on short episodes (CPU): epochs, discounting, the batched
play against the fixed-schedule evaluation, and the best responses against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.covid19.configs import env_config
from ai_economist.foundation.scenarios.covid19.training.fixed_policies import schedule_returns


@pytest.fixture
def analysis(import_benchmark):
    return import_benchmark("learning_analysis")


def short_env(days: int):
    return foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(episode_length=days)
    )


def test_epochs_and_discounting(analysis):
    starts = analysis.epoch_starts(540)
    assert len(starts) == 20 and starts[1] == 28 and starts[-1] == 532
    rewards = np.ones((1, 5, 2))
    rewards[0, :, 1] = [1, 2, 4, 8, 16]
    np.testing.assert_allclose(analysis.discounted_from(rewards, 2, 0.5), [[1.75, 12.0]])


def test_play_matches_the_fixed_schedules(analysis):
    env = short_env(60)
    starts = analysis.epoch_starts(60)  # days 1, 29, 57
    levels = np.zeros((2, 3, 51), dtype=np.int64)
    levels[0] = 6
    levels[1, :2], levels[1, 2] = 8, 3  # level 8 for 56 days, then 3
    _, planner = analysis.play(env, levels, np.array([0, 20]), starts)
    expected, _ = schedule_returns(env, np.array([[6, 60, 6, 0], [8, 56, 3, 20]]))
    np.testing.assert_allclose(planner.sum(axis=1), expected, rtol=1e-12)


def test_one_epoch_best_response_is_the_brute_force_argmax(analysis):
    env = short_env(20)  # one epoch: the ascent is an exhaustive search per state
    starts = analysis.epoch_starts(20)
    levels, used, changed = analysis.best_responses(env, [(1.0, 0), (0.9, 20)], starts, 3)
    assert changed == 0 and used == 2  # the second sweep changes nothing
    for i, (gamma, subsidy) in enumerate([(1.0, 0), (0.9, 20)]):
        every = np.repeat(np.arange(1, 11)[:, None, None], 51, axis=2)  # (10, 1, 51)
        agents, _ = analysis.play(env, every, np.full(10, subsidy), starts)
        value = analysis.discounted_from(agents, 0, gamma)  # (10, 51)
        np.testing.assert_array_equal(levels[i, 0], np.argmax(value, axis=0) + 1)


def test_undiscounted_ascent_never_lowers_a_states_sum(analysis):
    env = short_env(60)
    starts = analysis.epoch_starts(60)
    levels, _, _ = analysis.best_responses(env, [(1.0, 0)], starts, 2)
    start = np.full((1, 3, 51), 6, dtype=np.int64)
    agents, _ = analysis.play(env, np.concatenate([start, levels]), np.zeros(2, int), starts)
    sums = agents.sum(axis=1)
    assert (sums[1] >= sums[0] - 1e-12).all() and (sums[1] > sums[0]).any()
    gains = analysis.deviation_gains(env, starts, 1.0)
    assert [g[0] for g in gains] == [1, 29, 57] and all(g[1] >= 0 for g in gains)


def test_value_fit_targets_are_the_discounted_returns(analysis):
    pytest.importorskip("torch")
    rows = analysis.value_fit([0.5], checkpoints=(3,))[0.5]
    ((step, value, target, _),) = rows
    # random-action days pay a state about 0.80; with gamma 0.5 a return is about 2 days' worth
    assert step == 3 and 1.5 < target < 1.7 and abs(value) < 1.0  # fresh model: far below
