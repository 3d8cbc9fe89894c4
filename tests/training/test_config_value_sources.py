"""Config-value errors exit 2 and name the key or component and where the value came from: the
run-config file or the command-line override (issue 25)."""

import copy

import pytest
import yaml

from ai_economist.foundation.scenarios.simple_wood_and_stone.layout_file import (
    resolve_layout_path,
)
from ai_economist.training import training_script
from ai_economist.training.config import ConfigError, packaged_config_path, parse_override

GTB = packaged_config_path("gather_trade_build_phase1")
COVID = packaged_config_path("covid_and_economy_environment")


def error_of(argv, capsys) -> str:
    assert training_script.main([*argv, "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    return err


def write_config(tmp_path, source, edit) -> str:
    config = yaml.safe_load(source.read_text())
    edit(config)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_impossible_start_date_on_the_command_line_is_a_named_error(capsys):
    assert parse_override("env.start_date=2020-13-45") == (["env", "start_date"], "2020-13-45")
    err = error_of(["--config", str(COVID), "env.start_date=2020-13-45"], capsys)
    assert err.startswith("error: command-line override 'env.start_date=2020-13-45'")
    assert "start_date='2020-13-45' is not a date" in err


def test_impossible_start_date_in_a_file_names_the_file(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text(COVID.read_text().replace('start_date: "2020-03-22"', "start_date: 2020-13-45"))
    assert "2020-13-45" in path.read_text()
    err = error_of(["--config", str(path)], capsys)
    assert f"run config {path}: invalid value" in err and "month must be in 1..12" in err


def test_layout_from_the_command_line_blames_the_override_not_the_file(capsys):
    err = error_of(["--config", str(GTB), "env.env_layout_file=nope.txt"], capsys)
    assert err.startswith(
        f"error: command-line override 'env.env_layout_file=nope.txt' (applied to run config {GTB})"
    )
    assert "no packaged layout named 'nope.txt'" in err


def test_layout_from_the_file_blames_the_file(tmp_path, capsys):
    path = write_config(tmp_path, GTB, lambda c: c["env"].update(env_layout_file="nope.txt"))
    err = error_of(["--config", path, "trainer.num_envs=2"], capsys)
    assert err.startswith(f"error: run config {path}") and "command-line override" not in err


def test_a_good_override_beside_a_bad_file_value_blames_the_file(tmp_path, capsys):
    path = write_config(tmp_path, GTB, lambda c: c["env"].update(env_layout_file="nope.txt"))
    err = error_of(["--config", path, "env.energy_cost=0.3"], capsys)
    assert err.startswith(f"error: run config {path}") and "command-line override" not in err


def test_component_errors_name_the_component_and_its_place(tmp_path, capsys):
    def bad_payment(config):
        config["env"]["components"][0]["Build"]["payment"] = -5

    path = write_config(tmp_path, GTB, bad_payment)
    err = error_of(["--config", path], capsys)
    assert f"run config {path}: the 'env' block was rejected by component Build " in err
    assert "(env.components[0])" in err and "payment must be an int in [0, inf], got -5" in err


def test_component_list_from_the_command_line_blames_the_override(capsys):
    components = copy.deepcopy(yaml.safe_load(GTB.read_text())["env"]["components"])
    components[0]["Build"]["payment"] = -5
    override = "env.components=" + yaml.safe_dump(components, default_flow_style=True).strip()
    err = error_of(["--config", str(GTB), override], capsys)
    assert err.startswith(f"error: command-line override {override!r}")
    assert "component Build (env.components[0])" in err


def test_bare_layout_name_of_a_file_in_the_current_folder_gets_a_hint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_map.txt").write_text("W;")
    with pytest.raises(FileNotFoundError, match=r"write '\./my_map\.txt' to use it"):
        resolve_layout_path("my_map.txt")
    assert resolve_layout_path("./my_map.txt").resolve() == (tmp_path / "my_map.txt").resolve()
    with pytest.raises(FileNotFoundError) as err:
        resolve_layout_path("other.txt")
    assert "current folder" not in str(err.value)


def test_parse_override_errors_are_config_errors():
    with pytest.raises(ConfigError):
        parse_override("=3")


def test_a_seed_that_is_not_an_integer_is_refused_before_work(capsys):
    err = error_of(["--env", "tag_continuous", "--dry_run", "env.seed=abc"], capsys)
    assert err.startswith("error: command-line override 'env.seed=abc'")
    assert "seed must be None or an integer, got 'abc'" in err


def test_a_file_value_fixed_on_the_command_line_is_not_an_error(tmp_path, capsys):
    path = write_config(tmp_path, COVID, lambda c: c["trainer"].update(num_envs=-1))
    assert training_script.main(["--config", path, "--dry_run", "trainer.num_envs=2"]) == 0
    assert "is valid" in capsys.readouterr().out
