"""benchmarks/real_world_comparison.py: a checkpoint whose greedy states hold level 7 with no
subsidy must score exactly the fixed schedule ``fixed:7,405,7,0`` on the tutorial configuration
(349.28), beat the real-world policies (349.06) by their difference, and be reported as a
constant (CPU)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture
def comparison(import_benchmark):
    return import_benchmark("real_world_comparison")


def level_checkpoint(tmp_path: Path, state_level: int, subsidy_level: int) -> Path:
    """A trainer checkpoint (small models) whose greedy actions are constants."""
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment
    from ai_economist.training.config import load_run_config, packaged_config_path
    from ai_economist.warp_drive.training.checkpoint import FORMAT_VERSION, save_checkpoint
    from ai_economist.warp_drive.training.models import build_policy_model

    config = load_run_config(packaged_config_path("covid_and_economy_gpu_learning"))
    wrapper = FoundationEnvWrapper(CovidAndEconomyEnvironment(**config["env"]), 1, "numpy")
    policies = {}
    for tag, spec in wrapper.policy_specs.items():
        policy_config = copy.deepcopy(config["policy"][tag])
        policy_config["model"]["fc_dims"] = [8]
        config["policy"][tag]["model"]["fc_dims"] = [8]
        model = build_policy_model(tag, policy_config, spec, torch.device("cpu"))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.zero_()
            model.policy_head.bias[state_level if tag == "a" else subsidy_level] = 1.0
        policies[tag] = {"model": model.state_dict()}
    state = {"format_version": FORMAT_VERSION, "iteration": 0, "env_steps": 0,
             "config": config, "policies": policies, "ranks": 1}  # fmt: skip
    return save_checkpoint(tmp_path / "checkpoints" / "ckpt_0.pt", state)


def test_level_7_checkpoint_against_the_real_world(comparison, tmp_path, capsys):
    path = level_checkpoint(tmp_path, 7, 0)
    result = comparison.report(str(path), tmp_path / "plots")
    rows = result["rows"]
    assert list(rows) == ["trained (greedy)", *comparison.CONTEXT]
    assert rows["real-world"]["planner_reward"] == pytest.approx(349.06, abs=0.005)
    trained, fixed = rows["trained (greedy)"], rows["fixed:7,405,7,0"]
    assert trained["planner_reward"] == pytest.approx(fixed["planner_reward"], rel=1e-5)
    assert trained["deaths_thousands"] == pytest.approx(fixed["deaths_thousands"], rel=1e-9)
    assert trained["mean_unemployment_rate_pct"] == pytest.approx(
        fixed["mean_unemployment_rate_pct"], rel=1e-9
    )
    assert result["beats_real_world"] and result["margin"] == pytest.approx(0.22, abs=0.01)
    assert result["response"]["constancy"]["is_constant"]
    assert result["response"]["planner_reward_sum"] == pytest.approx(
        trained["planner_reward"], rel=1e-6
    )
    out = capsys.readouterr().out
    assert "the trained planner beats the real-world policies (349.28 vs 349.06" in out
    assert "deaths (k)" in out and "unempl. mean %" in out


def test_missing_checkpoint_is_named(comparison, tmp_path):
    with pytest.raises(SystemExit, match="no such file or folder"):
        comparison.main(["--checkpoint", str(tmp_path / "nothing")])


def test_models_file_and_run_config_instead_of_a_checkpoint(comparison, tmp_path, capsys):
    import yaml

    from ai_economist.warp_drive.training.checkpoint import load_checkpoint

    state = load_checkpoint(level_checkpoint(tmp_path, 7, 0))
    torch.save({t: p["model"] for t, p in state["policies"].items()}, tmp_path / "models.pt")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(state["config"]))
    comparison.main(["--models", str(tmp_path / "models.pt"), "--run_config",
                     str(tmp_path / "config.yaml"), "--out", str(tmp_path / "out")])  # fmt: skip
    out = capsys.readouterr().out
    assert "the trained planner beats the real-world policies (349.28 vs 349.06" in out
    assert (tmp_path / "out" / "real_world.json").is_file()
    with pytest.raises(SystemExit, match="--run_config ''"):
        comparison.main(["--models", str(tmp_path / "models.pt")])
