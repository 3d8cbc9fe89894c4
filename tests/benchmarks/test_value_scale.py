"""benchmarks/value_scale.py: in reward units the value term dominates and the update is
clipped; with PopArt targets the value loss starts near 0.5 and nothing is clipped; part 2
trains both settings and reports the states' rows."""

from __future__ import annotations

import pytest


@pytest.fixture
def bench(import_benchmark):
    return import_benchmark("value_scale")


def rows(text, first_word):
    return [line.split() for line in text.splitlines() if line.strip().startswith(first_word)]


def test_value_targets_in_reward_units_dominate_and_popart_does_not(bench, capsys):
    bench.main(["--gammas", "0.99", "--episodes", "1", "--iterations", "2", "--every", "1",
                "--num_envs", "1", "env.episode_length=30"])  # fmt: skip
    out = capsys.readouterr().out
    table = {(r[1], r[3]): r for r in rows(out, "0.990")}  # (targets, term) -> row
    reward_value, popart_value = table["reward", "value"], table["PopArt", "value"]
    policy = table["reward", "policy"]
    assert float(reward_value[4]) > 100 * float(popart_value[4])  # the value losses
    assert 0.3 < float(popart_value[4]) < 0.7  # 0.5 * E[(v - z)^2] with v ~ 0, z standardised
    assert float(reward_value[5]) > 1e4 * float(policy[5])  # trunk gradients
    assert float(reward_value[8]) < 0.2 and float(popart_value[8]) == 1.0  # clip factors
    assert "normalize_value=False" in out and "normalize_value=True" in out
    trained = rows(out, "1 ") + rows(out, "2 ")
    assert len(trained) == 4  # iterations 1 and 2 of both settings
    assert all(int(r[1].replace(",", "")) == int(r[0]) * 90 for r in trained)  # env-steps
