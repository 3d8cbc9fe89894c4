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
