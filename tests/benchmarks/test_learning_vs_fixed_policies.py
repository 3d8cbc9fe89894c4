"""benchmarks/learning_vs_fixed_policies.py: the greedy evaluation of saved models (CPU).

Hand-made models with a fixed greedy action (every state at stringency level 6, the planner at
subsidy level 0) must score exactly what the float64 array model gives for that constant
schedule (``policy_landscape.evaluate``), and forcing the planner's subsidy must move the sum
to the array model's value at that level.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch


@pytest.fixture
def learning(import_benchmark):
    return import_benchmark("learning_vs_fixed_policies")


def constant_models(learning, config, tmp_path) -> Path:
    """A --save_models file whose greedy states pick level 6 and greedy planner picks level 0."""
    models = learning.fresh_models(config)
    state = {}
    for tag, model in models.items():
        with torch.no_grad():
            for param in model.parameters():
                param.zero_()
            model.policy_head.bias[6 if tag == "a" else 0] = 1.0
        state[tag] = model.state_dict()
    path = tmp_path / "models.pt"
    torch.save(state, path)
    return path


def test_saved_models_are_evaluated_like_the_array_model(learning, tmp_path, capsys):
    from ai_economist import foundation
    from ai_economist.training.config import default_config_path, load_run_config

    config = load_run_config(default_config_path("covid_and_economy_environment"))
    path = constant_models(learning, config, tmp_path)
    models = learning.load_models(str(path), config)
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config["env"])
    expected, _ = learning.evaluate(env, np.array([[6, 540, 6, 0], [6, 540, 6, 20]]))
    assert learning.greedy_episode(models, config) == pytest.approx(expected[0], rel=1e-5)
    forced = learning.greedy_episode(models, config, planner_level=20)
    assert forced == pytest.approx(expected[1], rel=1e-5)
    assert expected[0] > max(learning.fixed_policy_sums(env).values())  # level 6 beats them

    learning.main(["--device", "cpu", "--evaluate_models", str(path), "--sampled_episodes", "0",
                   "--report_dir", str(tmp_path / "report")])  # fmt: skip
    out = capsys.readouterr().out
    assert (
        f"trained planner (greedy)                      planner reward sum {expected[0]:9.2f}"
        in out
    )
    assert "the trained planner beats every fixed policy (best fixed 435.61)" in out
    assert f"subsidy level 20: planner reward sum {expected[1]:.2f}" in out
    assert "constant? YES: 51 of 51 states hold one level" in out  # level 6 all episode
    assert "against closed 180 days, then open, no subsidy: beats by +10.70" in out
