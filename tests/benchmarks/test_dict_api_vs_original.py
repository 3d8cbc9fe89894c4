"""CPU smoke test of ``benchmarks/dict_api_vs_original.py`` (our side only: the original
1.7.1 is not installed in CI) and of its refusal without ``--original``."""

from __future__ import annotations

import json
import sys

import pytest


@pytest.fixture
def bench(import_benchmark):
    return import_benchmark("dict_api_vs_original")


@pytest.mark.parametrize("scenario", ["covid", "gtb"])
def test_our_child_times_the_scenario_with_the_shared_config(bench, tmp_path, scenario):
    config = tmp_path / "spec.json"
    config.write_text(json.dumps(bench.scenario_spec(scenario)))
    result = bench.run_child("ours", scenario, str(config), warmup=2, steps=5)
    assert result["scenario"] == scenario and result["wall"] > 0 and result["cpu"] > 0
    assert "site-packages" not in result["file"]
    if scenario == "gtb":  # env.step alone is faster than env.step plus the action sampling
        assert result["step_wall"] > result["wall"] and result["step_cpu"] > result["cpu"]
    else:
        assert "step_wall" not in result


def test_covid_actions_are_per_agent_dicts_of_python_ints(bench):
    import numpy as np

    actions = bench._covid_actions(np)
    assert len(actions) == 64 and list(actions[0]) == [str(i) for i in range(51)] + ["p"]
    assert all(type(v) is int for a in actions for v in a.values())


def test_a_missing_original_is_refused_by_name(bench, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sys, "argv", ["dict_api_vs_original.py", "--original", str(tmp_path)])
    with pytest.raises(SystemExit):
        bench.main()
    assert f"--original '{tmp_path}'" in capsys.readouterr().err


def test_subspace_bounds_of_hand_made_positions(bench):
    # sub-spaces [0, 3), [3, 5), [5, 9); allowed flat indices 0, 2, 3, 5, 8
    assert bench._subspace_bounds([0, 2, 3, 5, 8], [3, 2, 4]) == ([0, 3, 5], [0, 2, 3, 5])


def test_random_valid_action_draws_as_the_numpy_version(bench):
    import numpy as np

    multi = [np.int32(4), np.int32(3), np.int32(5)]  # the planner's sizes are numpy ints
    masks = np.random.default_rng(1).random((300, 12)) < 0.4
    masks[:200, [0, 4, 7]] = True  # the NO-OPs allowed (the fast path)
    masks[200:, 4:7] = False  # an empty sub-space (the numpy version)
    masks[200:, [0, 7]] = True
    fast, slow = np.random.default_rng(2), np.random.default_rng(2)
    for mask in masks:
        allowed = np.flatnonzero(mask)
        got = bench._random_valid_action(np, mask.astype(np.float32), fast, multi)
        assert got == bench._random_valid_multi_numpy(np, allowed, slow, multi)
        assert all(type(a) is int for a in got)
    assert fast.random() == slow.random()  # the same draws in the same order
    hand = np.zeros(12, dtype=np.float32)
    hand[[0, 2, 4, 7, 11]] = 1  # allowed: {0, 2}, {0}, {0, 4}
    picks = np.random.default_rng(3).random(3)
    expected = [[0, 2][int(picks[0] * 2)], 0, [0, 4][int(picks[2] * 2)]]
    assert bench._random_valid_action(np, hand, np.random.default_rng(3), multi) == expected
