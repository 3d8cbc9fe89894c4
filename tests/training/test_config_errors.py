"""Every config-derived mistake stops the training command with exit status 2 before any work,
naming the key, the value and what was expected (issue 11)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from ai_economist.training import preflight, training_script
from ai_economist.training.config import (
    ConfigError,
    find_run_config,
    load_run_config,
    load_yaml,
    packaged_config_path,
    parse_override,
)

DEMO = str(packaged_config_path("covid_and_economy_cpu_demo"))
TOY = str(packaged_config_path("toy"))


def run_cli(tmp_path, capsys, args):
    """Run the training command; return (exit status, stderr, whether the run dir exists)."""
    run_dir = tmp_path / "run"
    code = training_script.main([*args, "--results_dir", str(run_dir), "--quiet"])
    return code, capsys.readouterr().err, run_dir.exists()


@pytest.mark.parametrize(
    "override,expected",
    [
        ("env.foo=1", "unknown key 'env.foo'"),
        ("env.episode_lenght=5", "unknown key 'env.episode_lenght' (did you mean 'env.episode_length'?)"),
        ("env.pop_between_age_18_65=2", "pop_between_age_18_65 must be in [0, 1], got 2"),
        ("env.n_agents=3", "n_agents must be 51 (one per US state and DC), got 3"),
        ("env.episode_length=0", "episode_length must be an int >= 1, got 0"),
        ("env.start_date=2019-01-01", "start_date='2019-01-01' is before"),
        ("env.components=[{Foo: {}}]", "'env.components[0]': unknown component 'Foo'; known: "),
        ("env.components=[{FederalGovernmentSubsdy: {}}]", "(did you mean 'FederalGovernmentSubsidy'?)"),
        ("env.components=[{VaccinationCampaign: {bogus: 1}}]",
         "unknown key 'env.components[0].VaccinationCampaign.bogus'"),
        ("env.components=[{ControlUSStateOpenCloseStatus: {action_cooldown_period: -1}}]",
         "action_cooldown_period must be >= 1, got -1"),
        ("env.components=5", "'env.components': components must be a list"),
        ("env.path_to_data_and_fitted_params=/no/such/dir",
         "'env.path_to_data_and_fitted_params' = '/no/such/dir': calibration path /no/such/dir"),
        ("trainer.train_batch_size=720", "'trainer.train_batch_size' (720) must be <= "
         "'trainer.num_episodes' x the episode length (1 x 540 = 540 env-steps)"),
        ("policy.p.num_mini_batches=400", "'policy.p.num_mini_batches' (400) must be <= "
         "'trainer.train_batch_size' (360)"),
    ],
)  # fmt: skip
def test_covid_env_mistakes_exit_2_naming_key_and_value(tmp_path, capsys, override, expected):
    pytest.importorskip("ai_economist.foundation.scenarios.covid19.covid19_env")
    args = ["--config", DEMO, "--device", "cpu", "trainer.num_episodes=1", override]
    code, err, made = run_cli(tmp_path, capsys, args)
    assert code == 2, err
    assert expected in err
    if override.startswith("env."):  # the value came from the command line, not the file
        assert err.startswith(
            f"error: command-line override {override!r} (applied to run config {DEMO})"
        )
    else:
        assert err.startswith(f"error: run config {DEMO} (with command-line overrides ")
        assert override in err.splitlines()[0]
    assert "Traceback" not in err and not made


def test_damaged_calibration_file_is_a_config_error(tmp_path, capsys):
    pytest.importorskip("ai_economist.foundation.scenarios.covid19.covid19_env")
    bad = tmp_path / "covid19_calibration.npz"
    bad.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    override = f"env.path_to_data_and_fitted_params={bad}"
    code, err, made = run_cli(tmp_path, capsys, ["--config", DEMO, "--device", "cpu", override])
    assert code == 2 and f"'env.path_to_data_and_fitted_params' = '{bad}'" in err and not made


def test_toy_env_values_are_checked_too(tmp_path, capsys):
    code, err, _ = run_cli(tmp_path, capsys, ["--config", TOY, "--device", "cpu",
                                              "env.num_agents=two"])  # fmt: skip
    assert code == 2 and "the 'env' block was rejected by ToyTargetEnv" in err and "two" in err


def test_results_dir_on_a_file_or_under_one(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for target, expected in [
        (afile, f"--results_dir {afile}: is a file, not a directory"),
        (afile / "run", f"--results_dir {afile / 'run'}: is under {afile}, which is a file"),
    ]:
        code = training_script.main(
            ["--config", TOY, "--device", "cpu", "--results_dir", str(target)]
        )
        assert code == 2 and expected in capsys.readouterr().err
    assert afile.read_text() == "x"


def test_saving_basedir_on_a_file(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    code = training_script.main(["--config", TOY, "--device", "cpu", f"saving.basedir={afile}"])
    assert code == 2 and f"saving.basedir {afile}: is a file" in capsys.readouterr().err


def test_unwritable_output_dir(tmp_path, capsys, monkeypatch):
    def refuse(**_kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(preflight.tempfile, "mkstemp", refuse)  # root may write anywhere
    code, err, made = run_cli(tmp_path, capsys, ["--config", TOY, "--device", "cpu"])
    assert code == 2 and not made
    assert (
        f"--results_dir {tmp_path / 'run'}: cannot write into {tmp_path} (Permission denied)" in err
    )


def test_output_dir_probe_leaves_nothing_behind(tmp_path):
    preflight.check_output_dir(tmp_path / "a" / "b", "--results_dir")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "content,expected",
    [
        (b"name: toy\x00\x01\x02", "looks like a binary file (NUL byte at offset 9)"),
        ("name: café\n".encode("latin-1"), "byte 0xe9 at offset 9 is not UTF-8"),
        ("name: toy\n".encode("utf-16"), "is UTF-16 text; expected a UTF-8 YAML file"),
        (b"name: toy\ntrainer: {num_envs: 4}\nname: other\n", "duplicate key 'name' (first given on line 1)"),
        (b"trainer:\n  num_envs: 4\n  num_envs: 8\n", "duplicate key 'num_envs' (first given on line 2)"),
    ],
)  # fmt: skip
def test_binary_non_utf8_and_duplicate_keys(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=f"run config {path}"):
        load_yaml(path)
    code = training_script.main(["--config", str(path), "--device", "cpu"])
    assert code == 2 and expected in capsys.readouterr().err


def test_yaml_merge_keys_are_not_duplicates(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\n")
    assert load_yaml(path)["other"] == {"x": 1, "y": 3}


def test_a_directory_as_config(tmp_path):
    with pytest.raises(ConfigError, match=f"run config {tmp_path}: is a directory"):
        load_yaml(tmp_path)


def write_toy(tmp_path, edit) -> str:
    config = yaml.safe_load((packaged_config_path("toy")).read_text())
    edit(config["policy"]["a"])
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.mark.parametrize(
    "key,value,expected",
    [
        ("lr", 0, "'policy.a.lr' must be > 0, got 0.0"),
        ("lr", -1e-3, "'policy.a.lr' must be > 0, got -0.001"),
        ("lr", [[0, 1e-3], [100, -1e-3]], "'policy.a.lr' must be >= 0 after the first schedule point, got -0.001 at step 100"),
        ("lr", [[0, 0.0], [100, 1e-3]], "'policy.a.lr' must be > 0 at the first schedule point, got 0.0 at step 0"),
        ("gamma", [[0, 0.99], [100, 0.0]], "'policy.a.gamma' must be in (0, 1] at every schedule point, got 0.0 at step 100"),
        ("gamma", 0, "'policy.a.gamma' must be in (0, 1], got 0.0"),
        ("gamma", 1.01, "'policy.a.gamma' must be in (0, 1], got 1.01"),
        ("gamma", float("nan"), "'policy.a.gamma' must be in (0, 1], got nan"),
        ("gamma", "nan", "'policy.a.gamma' must be in (0, 1], got nan"),
        ("gae_lambda", 1.5, "'policy.a.gae_lambda' must be in [0, 1], got 1.5"),
        ("entropy_coeff", -0.01, "'policy.a.entropy_coeff' must be >= 0, got -0.01"),
        ("vf_loss_coeff", float("inf"), "'policy.a.vf_loss_coeff' must be >= 0, got inf"),
        ("clip_param", 0, "'policy.a.clip_param' must be > 0, got 0.0"),
        ("max_grad_norm", float("nan"), "'policy.a.max_grad_norm' must be > 0, got nan"),
        ("entropy_coeff", [[0, 0.1], [float("nan"), 0.0]], "'policy.a.entropy_coeff': schedule steps"),
    ],
)  # fmt: skip
def test_out_of_range_hyper_parameters(tmp_path, capsys, key, value, expected):
    path = write_toy(tmp_path, lambda a: a.update({key: value}))
    with pytest.raises(ConfigError, match=f"run config {path}") as err:
        load_run_config(path)
    assert expected in str(err.value)
    assert training_script.main(["--config", path, "--device", "cpu"]) == 2
    assert expected in capsys.readouterr().err


def test_edges_of_the_ranges_are_accepted(tmp_path):
    edit = {"gamma": 1, "gae_lambda": 0, "entropy_coeff": [[0, 0.5], [100, 0.0]],
            "lr": [[0, 1e-3], [100, 0.0]]}  # fmt: skip
    resolved = load_run_config(write_toy(tmp_path, lambda a: a.update(edit)))["policy"]["a"]
    assert (resolved["gamma"], resolved["gae_lambda"]) == (1.0, 0.0)
    assert resolved["lr"] == [[0, 1e-3], [100, 0.0]]  # annealed to 0


def test_config_by_packaged_name(tmp_path, capsys):
    demo = packaged_config_path("covid_and_economy_cpu_demo")
    assert find_run_config("covid_and_economy_cpu_demo") == demo
    assert find_run_config("covid_and_economy_cpu_demo.yaml") == demo
    with pytest.raises(ConfigError) as err:
        find_run_config("covid_demo")
    assert "--config covid_demo: no such file, and no packaged run config of that name" in str(
        err.value
    )
    assert (
        "covid_and_economy_cpu_demo, covid_and_economy_cpu_learning, covid_and_economy_environment"
        in str(err.value)
    )
    # the command line resolves the name (the typo below then stops it before any work)
    code, err_text, _ = run_cli(tmp_path, capsys, ["--config", "toy", "trainer.num_env=4"])
    assert code == 2 and f"run config {packaged_config_path('toy')}" in err_text


def test_dates_in_overrides_stay_strings():
    assert parse_override("env.start_date=2020-04-01") == (["env", "start_date"], "2020-04-01")


def test_accepted_kwargs_follow_kwargs_to_the_parents():
    class Base:
        def __init__(self, a=1, b=2):
            pass

    class Child(Base):
        def __init__(self, *args, c=3, **kwargs):
            super().__init__(*args, **kwargs)

    class Open:
        def __init__(self, **kwargs):
            pass

    assert preflight.accepted_kwargs(Child) == ["c", "a", "b"]
    assert preflight.accepted_kwargs(Open) is None
    assert preflight.unknown_keys({"a": 1, "cc": 2}, ["a", "c"], "env.") == [
        "unknown key 'env.cc' (did you mean 'env.c'?)"
    ]


def test_keywords_taken_through_kwargs_are_in_the_signature():
    """PeriodicBracketTax takes TaxConfig's fields through **kwargs; its signature shows them
    (with TaxConfig's defaults), so the run-config key check knows them."""
    import inspect

    from ai_economist.foundation.components.periodic_tax import PeriodicBracketTax
    from ai_economist.foundation.components.tax_config import TaxConfig

    names = preflight.accepted_kwargs(PeriodicBracketTax)
    fields = [f.name for f in dataclasses.fields(TaxConfig) if f.name != "disc_rates"]
    assert names == fields + ["world", "episode_length", "inventory_scale"]
    params = inspect.signature(PeriodicBracketTax).parameters
    assert params["period"].default == 100 and params["bracket_spacing"].default == "us-federal"
    assert all(params[n].kind is inspect.Parameter.KEYWORD_ONLY for n in fields)
    assert preflight.component_errors([{"PeriodicBracketTax": {"perod": 5}}]) == [
        "unknown key 'env.components[0].PeriodicBracketTax.perod' (did you mean "
        "'env.components[0].PeriodicBracketTax.period'?)"
    ]


def test_covid_scenario_keywords_are_build_params_ones():
    """CovidAndEconomyEnvironment takes build_params's scenario arguments through **kwargs;
    its signature shows them with build_params's defaults."""
    import inspect

    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment
    from ai_economist.foundation.scenarios.covid19.model.params import build_params

    built = inspect.signature(build_params).parameters
    scenario = [n for n, p in built.items() if p.default is not p.empty]
    assert scenario[0] == "start_date" and scenario[-1] == "reward_normalization_factor"
    names = preflight.accepted_kwargs(CovidAndEconomyEnvironment)
    assert names[:11] == ["use_real_world_data", "use_real_world_policies",
                          "path_to_data_and_fitted_params", *scenario]  # fmt: skip
    params = inspect.signature(CovidAndEconomyEnvironment).parameters
    assert [params[n].default for n in scenario] == [built[n].default for n in scenario]


def test_with_keywords_needs_a_var_keyword():
    from ai_economist.foundation.base.validation import with_keywords

    def closed(a, b=1):
        pass

    with pytest.raises(TypeError, match="closed has no \\*\\*kwargs"):
        with_keywords(closed, [])


@pytest.mark.parametrize(
    "override,expected",
    [
        ("trainer.env_backend=pycuda", "'trainer.env_backend' = 'pycuda' steps the env on the GPU"
         " and needs trainer.device cuda, got 'cpu'"),
        ("policy.a.model.model_ckpt_filepath=/no/such.pt",
         "'policy.a.model.model_ckpt_filepath' = '/no/such.pt': file not found"),
    ],
)  # fmt: skip
def test_backend_and_model_file_mistakes(tmp_path, capsys, override, expected):
    code, err, made = run_cli(tmp_path, capsys, ["--config", TOY, "--device", "cpu", override])
    assert code == 2 and expected in err and not made


def test_old_run_config_paths_still_load_with_a_deprecation_warning(monkeypatch):
    """1.7.1's ai_economist/training/run_configs/<name>.yaml names the packaged config that
    now lives beside its environment."""
    from ai_economist.training import config as config_module

    monkeypatch.chdir(Path(config_module.__file__).parents[2])  # the checkout
    old = "ai_economist/training/run_configs/covid_and_economy_cpu_demo.yaml"
    new = packaged_config_path("covid_and_economy_cpu_demo")
    assert new.parent.name == "run_configs" and new.parent.parent.name == "covid19"
    with pytest.warns(DeprecationWarning, match=f"beside its environment: {new}"):
        assert find_run_config(old) == new
    with pytest.warns(DeprecationWarning):
        assert load_run_config(old)["name"] == "covid_and_economy_environment"
    with pytest.warns(DeprecationWarning, match="RUN_CONFIG_DIR is deprecated"):
        assert config_module.RUN_CONFIG_DIR.name == "run_configs"
