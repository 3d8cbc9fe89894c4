"""Run-config schema: the published configs validate; unknown keys, wrong types and missing
fields stop the run with a message naming the key and the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ai_economist.training.config import (
    ConfigError,
    apply_overrides,
    load_run_config,
    packaged_config_path,
    parse_override,
)

PUBLISHED = packaged_config_path("covid_and_economy_environment")
DEMO = packaged_config_path("covid_and_economy_cpu_demo")


def test_published_covid_config_is_reproduced():
    config = load_run_config(PUBLISHED)
    env = config["env"]
    assert config["name"] == "covid_and_economy_environment"
    assert env["components"] == [
        {"ControlUSStateOpenCloseStatus": {"action_cooldown_period": 28}},
        {"FederalGovernmentSubsidy": {"num_subsidy_levels": 20, "subsidy_interval": 90,
                                      "max_annual_subsidy_per_person": 20000}},
        {"VaccinationCampaign": {"daily_vaccines_per_million_people": 3000, "delivery_interval": 1,
                                 "vaccine_delivery_start_date": "2021-01-12"}},
    ]  # fmt: skip
    assert (env["episode_length"], env["n_agents"], env["economic_reward_crra_eta"]) == (540, 51, 2)
    assert (env["health_priority_scaling_agents"], env["health_priority_scaling_planner"]) == (
        0.3,
        0.45,
    )
    assert env["flatten_masks"] is True and env["flatten_observations"] is False
    assert env["collate_agent_step_and_reset_data"] is True and env["world_size"] == [1, 1]
    assert env["start_date"] == "2020-03-22" and env["path_to_data_and_fitted_params"] == ""
    trainer = config["trainer"]
    assert (trainer["num_envs"], trainer["num_episodes"], trainer["train_batch_size"]) == (
        60,
        1000,
        5400,
    )
    a, p = config["policy"]["a"], config["policy"]["p"]
    assert a["algorithm"] == p["algorithm"] == "PPO"
    assert a["gamma"] == p["gamma"] == 0.98 and a["lr"] == p["lr"] == 1e-4
    assert a["vf_loss_coeff"] == p["vf_loss_coeff"] == 1.0
    assert a["entropy_coeff"] == 0.05 and p["entropy_coeff"] == [[0, 0.5], [50000000, 0.05]]
    assert a["model"]["fc_dims"] == p["model"]["fc_dims"] == [256, 256]
    assert config["saving"] == {**config["saving"], "metrics_log_freq": 100, "model_params_save_freq": 500,
                                "basedir": "./runs", "name": "covid19_and_economy", "tag": "experiments"}  # fmt: skip


def test_demo_config_has_the_same_env_and_a_small_trainer():
    demo, published = load_run_config(DEMO), load_run_config(PUBLISHED)
    assert demo["env"] == published["env"]
    assert demo["trainer"]["num_envs"] == 4 and demo["saving"]["basedir"] == "./runs"
    assert demo["policy"]["a"]["model"]["fc_dims"] == [64, 64]


def differences(a: dict, b: dict, prefix: str = "") -> dict[str, tuple]:
    """Dotted keys whose values differ between two resolved configs."""
    out = {}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if isinstance(x, dict) and isinstance(y, dict):
            out.update(differences(x, y, f"{prefix}{key}."))
        elif x != y:
            out[f"{prefix}{key}"] = (x, y)
    return out


def test_gpu_learning_config_is_the_published_one_but_documented_changes():
    learning = load_run_config(packaged_config_path("covid_and_economy_gpu_learning"))
    assert differences(learning, load_run_config(PUBLISHED)) == {
        # 180 iterations, each one whole 540-day episode of 1,200 envs, on the GPU
        "trainer.num_envs": (1200, 60),
        "trainer.train_batch_size": (648000, 5400),
        "trainer.num_episodes": (216000, 1000),
        "trainer.device": ("cuda", "auto"),
        "trainer.cuda_graphs": (True, "auto"),
        # far-sighted states; Monte-Carlo advantages (lambda 1) for both; 24 Adam steps an iteration
        "policy.a.gamma": (0.998, 0.98),
        "policy.a.gae_lambda": (1.0, 0.95),
        "policy.p.gae_lambda": (1.0, 0.95),
        "policy.a.num_mini_batches": (24, 1),
        "policy.p.num_mini_batches": (24, 1),
        "saving.metrics_log_freq": (10, 100),
        "saving.model_params_save_freq": (50, 500),
        "saving.tag": ("gpu_learning", "experiments"),
    }


def test_cpu_learning_config_is_the_published_one_but_documented_changes():
    learning = load_run_config(packaged_config_path("covid_and_economy_cpu_learning"))
    assert differences(learning, load_run_config(PUBLISHED)) == {
        # 135 iterations, each one whole 540-day episode of every env, on the CPU
        "trainer.num_envs": (30, 60),
        "trainer.train_batch_size": (16200, 5400),
        "trainer.num_episodes": (4050, 1000),
        "trainer.device": ("cpu", "auto"),
        # far-sighted states; Monte-Carlo advantages (lambda 1) for both; 24 Adam steps an iteration
        "policy.a.gamma": (0.998, 0.98),
        "policy.a.gae_lambda": (1.0, 0.95),
        "policy.p.gae_lambda": (1.0, 0.95),
        "policy.a.num_mini_batches": (24, 1),
        "policy.p.num_mini_batches": (24, 1),
        "saving.metrics_log_freq": (10, 100),
        "saving.model_params_save_freq": (50, 500),
        "saving.tag": ("cpu_learning", "experiments"),
    }
    assert learning["trainer"]["train_batch_size"] == 30 * learning["env"]["episode_length"]


def write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def base() -> dict:
    return yaml.safe_load((packaged_config_path("toy")).read_text())


def test_unknown_key_names_key_file_and_suggestion(tmp_path):
    config = base()
    config["trainer"]["num_env"] = config["trainer"].pop("num_envs")
    path = write(tmp_path, config)
    with pytest.raises(ConfigError) as err:
        load_run_config(path)
    msg = str(err.value)
    assert f"run config {path}" in msg
    assert "unknown key 'trainer.num_env' (did you mean 'trainer.num_envs'?)" in msg
    assert "missing required key 'trainer.num_envs'" in msg


@pytest.mark.parametrize(
    "edit,expected",
    [
        (lambda c: c["trainer"].update(num_envs="four"), "'trainer.num_envs' must be an integer, got 'four'"),
        (lambda c: c["policy"]["a"].update(lr="fast"), "'policy.a.lr' must be a number or a schedule"),
        (lambda c: c["policy"]["p"].update(algorithm="SAC"), "'policy.p.algorithm' must be one of"),
        (lambda c: c["policy"]["a"]["model"].update(fc_dims=[64, "x"]), "'policy.a.model.fc_dims' must be a list"),
        (lambda c: c["saving"].update(tensorboard="yes"), "'saving.tensorboard' must be true or false"),
        (lambda c: c["trainer"].pop("train_batch_size"), "missing required key 'trainer.train_batch_size'"),
        (lambda c: c.pop("name"), "missing required key 'name'"),
        (lambda c: c["policy"]["a"].update(entropy_coeff=[[10, 1], [5, 0]]), "schedule steps must be"),
        (lambda c: c["trainer"].update(num_envs=0), "'trainer.num_envs' must be >= 1"),
        (lambda c: c["trainer"].update(train_batch_size=321), "must be a multiple of 'trainer.num_envs' (16)"),
        (lambda c: c.update(policy={}), "'policy' must map policy tags"),
    ],
)  # fmt: skip
def test_type_and_value_errors(tmp_path, edit, expected):
    config = base()
    edit(config)
    path = write(tmp_path, config)
    with pytest.raises(ConfigError, match=str(path)) as err:
        load_run_config(path)
    assert expected in str(err.value)


def test_defaults_are_filled_and_yaml_exponents_accepted(tmp_path):
    config = base()
    config["policy"]["a"]["lr"] = "1e-3"  # how PyYAML reads 1e-3
    resolved = load_run_config(write(tmp_path, config))
    a = resolved["policy"]["a"]
    assert a["lr"] == 1e-3 and a["clip_param"] == 0.2 and a["to_train"] is True
    assert resolved["trainer"]["seed"] == 0 and resolved["saving"]["keep_checkpoints"] == 0


def test_overrides_reach_a_component_of_a_list() -> None:
    env = {"env": {"components": [{"Gather": {"move_labor": 1}}, {"Build": None}]}}
    out = apply_overrides(env, ["env.components.Gather.move_labor=2",
                                "env.components.Build.payment=5"])  # fmt: skip
    assert out["env"]["components"] == [{"Gather": {"move_labor": 2}}, {"Build": {"payment": 5}}]
    assert env["env"]["components"][0] == {"Gather": {"move_labor": 1}}  # a copy was changed
    with pytest.raises(ConfigError, match=r"no entry 'Gahter'; its entries: Gather, Build"):
        apply_overrides(env, ["env.components.Gahter.move_labor=2"])
    with pytest.raises(ConfigError, match=r"'env.components.Gather' names a list entry"):
        apply_overrides(env, ["env.components.Gather=3"])
    with pytest.raises(ConfigError, match=r"'policy.fc_dims' is a value, not a block"):
        apply_overrides({"policy": {"fc_dims": [8, 8]}}, ["policy.fc_dims.x=1"])


def test_overrides():
    assert parse_override("trainer.num_envs=4") == (["trainer", "num_envs"], 4)
    assert parse_override("policy.a.lr=1e-3") == (["policy", "a", "lr"], 1e-3)
    assert parse_override("policy.a.model.fc_dims=[8,8]")[1] == [8, 8]
    assert parse_override("saving.basedir=/tmp/run")[1] == "/tmp/run"
    with pytest.raises(ConfigError, match="key.path=value"):
        parse_override("trainer.num_envs")
    with pytest.raises(ConfigError, match="is a value, not a block"):
        apply_overrides({"name": "toy"}, ["name.x=1"])
    resolved = load_run_config(
        packaged_config_path("toy"), ["trainer.num_envs=4", "trainer.train_batch_size=40"]
    )
    assert resolved["trainer"]["num_envs"] == 4
    with pytest.raises(
        ConfigError, match=r"overrides trainer\.num_env=4.*unknown key 'trainer\.num_env'"
    ):
        load_run_config(packaged_config_path("toy"), ["trainer.num_env=4"])


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_run_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("trainer: [1, 2\n")
    with pytest.raises(ConfigError, match=f"run config {bad}: invalid YAML"):
        load_run_config(bad)
