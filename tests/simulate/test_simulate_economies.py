"""``ai-economist-simulate`` on the economies: tax policies, agents, sweeps, CSV, plots."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ai_economist.foundation.components.tax_brackets import US_FEDERAL_2018_RATES
from ai_economist.foundation.scenarios.one_step_economy import schedules
from ai_economist.foundation.scenarios.one_step_economy import simulate as ose
from ai_economist.foundation.scenarios.simple_wood_and_stone import simulate as gtb
from ai_economist.foundation.scenarios.simple_wood_and_stone import simulate_env as gtb_env
from ai_economist.simulate import SimulateError, SweepTable
from ai_economist.simulate.cli import main
from ai_economist.simulate.economies import parse_rates
from ai_economist.simulate.scenarios import get_scenario

RATES = [c for c in ose.RATE_COLUMNS]
GTB_SHORT = ["episode_length=50", "tax_period=25"]


def _one_step(policies, sweeps=(), **options) -> SweepTable:
    return get_scenario("one-step-economy").run(policies, sweeps, **options)


def _defaults() -> dict:
    return {n: p.default for n, p in ose.PARAMETERS.items()}


def test_free_market_collects_no_tax_and_fixed_rates_are_reported():
    table = _one_step(["free-market", "fixed:0.1", "us-federal"], episodes=1)
    free, fixed, us = table.rows()
    assert free["tax_revenue"] == 0.0 and all(free[c] == 0.0 for c in RATES)
    assert [fixed[c] for c in RATES] == [0.1] * 7
    assert [us[c] for c in RATES] == list(US_FEDERAL_2018_RATES)
    # a flat 10% on every bracket: the revenue is a tenth of the incomes (all paid back)
    assert fixed["tax_revenue"] == pytest.approx(0.1 * fixed["productivity"], rel=1e-12)
    assert free["productivity"] == pytest.approx(free["mean_coin"] * 10)


def test_us_federal_tax_of_one_known_income():
    """Agent 0 earns 50 coin (skill 1, 50 hours): 10% of 9.7 + 12% of 29.775 + 22% of 10.525."""
    params = dataclasses.replace(ose.model_params(_defaults()), skills=np.ones(10))
    hours = np.zeros((1, 10), dtype=np.int64)
    hours[0, 0] = 50
    state = ose.play(params, np.array([US_FEDERAL_2018_RATES]), hours)
    expected = 0.10 * 9.7 + 0.12 * (39.475 - 9.7) + 0.22 * (50 - 39.475)
    assert state.total_collected_taxes[0] == pytest.approx(expected, rel=1e-12)
    assert state.coin[0, 0] == pytest.approx(50 - expected + expected / 10)
    assert state.coin[0, 1] == pytest.approx(expected / 10)


def test_batched_best_responses_equal_the_schedule_comparisons_per_env():
    params = ose.model_params(_defaults())
    rates = np.array([[0.0] * 7, US_FEDERAL_2018_RATES, [0.5, 0.1, 0.3, 0.0, 0.9, 0.2, 0.4]])
    hours = ose.best_response_hours(params, rates)
    for e in range(3):
        assert hours[e].tolist() == schedules.best_response_hours(params, rates[e]).tolist()


def test_rows_are_policies_times_sweep_combinations_in_the_csv(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["--scenario", "one-step-economy", "--policy", "free-market", "us-federal",
            "fixed:0.2", "--sweep", "isoelastic_eta=0.1:0.3:2", "--sweep", "seed=0,1",
            "--episodes", "1", "--out", str(out), "--no_progress", "--no_plots"]  # fmt: skip
    assert main(args) == 0
    table = SweepTable.from_csv(out / "sweep.csv")
    assert len(table) == 3 * 2 * 2
    assert table.names[:5] == ["run", "policy", "agents", "scenario", "episodes"]
    assert {"equality_x_productivity", "planner_welfare", "mean_labor", *RATES} <= set(table.names)
    assert list(table["policy"][:4]) == ["free-market"] * 4
    assert list(table["isoelastic_eta"][:4]) == [0.1, 0.1, 0.3, 0.3]
    assert list(table["seed"][:4]) == [0, 1, 0, 1] and table["agents"][0] == "best-response"
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["free-market", "4"] and lines[-1].startswith("12 runs in ")


def test_random_agents_follow_the_seed_not_the_batch():
    both = _one_step(["fixed:0.1"], {"seed": [3, 4]}, agents="random", episodes=1)
    alone = _one_step(["fixed:0.1"], {"seed": [4]}, agents="random", episodes=1, chunk_size=1)
    again = _one_step(["fixed:0.1"], {"seed": [3, 4]}, agents="random", episodes=1)
    assert both.equals(again)
    assert both["productivity"][1] == alone["productivity"][0]
    assert both["productivity"][0] != both["productivity"][1]


def test_two_workers_give_the_same_table():
    sweeps = {"labor_cost": [0.5, 0.7], "seed": [0, 1]}
    one = _one_step(["saez", "fixed:0.2"], sweeps, episodes=2, agents="random")
    two = _one_step(["saez", "fixed:0.2"], sweeps, episodes=2, agents="random", workers=2)
    assert two.equals(one) and len(one) == 8


def test_saez_draws_random_rates_until_its_buffer_is_full():
    one = _one_step(["saez", "saez-average"], episodes=1)
    first = np.random.default_rng([0, 1]).uniform(0.0, 1.0, size=7)
    assert [one[c][0] for c in RATES] == pytest.approx(first.tolist(), rel=0, abs=0)
    assert [one[c][1] for c in RATES] == [0.0] * 7  # the running average starts at zero
    settled = _one_step(["saez"], episodes=60)  # 50 episodes of 10 incomes fill the buffer
    rates = np.array([settled[c][0] for c in RATES])
    assert ((rates >= 0) & (rates <= 1)).all() and not np.allclose(rates, first)


def test_list_parameters_names_each_scenarios_own(capsys):
    assert main(["--scenario", "gather-trade-build", "--list_parameters"]) == 0
    names = [line.split(":")[0] for line in capsys.readouterr().out.splitlines()]
    assert names == list(gtb.PARAMETERS)
    assert main(["--list_parameters"]) == 0  # COVID-19 training
    assert "health_priority: " in capsys.readouterr().out


def test_gather_trade_build_policies_and_seeds():
    run = get_scenario("gather-trade-build").run
    table = run(["free-market", "fixed:0.3", "us-federal"], [*GTB_SHORT, "seed=0,1"])
    assert len(table) == 6 and list(table["seed"]) == [0, 1] * 3
    assert list(table["tax_revenue"][:2]) == [0.0, 0.0]
    assert [table[c][2] for c in gtb.RATE_COLUMNS] == pytest.approx([0.3] * 7, rel=1e-15)
    assert table["agents"][0] == "builder" and table["productivity"].min() > 0
    # builders never trade, so no period income is negative: a flat 30% collects 30% of the
    # incomes, and the lump sums keep the total coin (productivity) as without taxes
    assert table["tax_revenue"][2:4] == pytest.approx(0.3 * table["productivity"][2:4], rel=1e-12)
    assert table["productivity"][2:4] == pytest.approx(table["productivity"][:2], rel=1e-12)
    assert (table["tax_revenue"][4:] > 0).all()
    assert (table["equality"][2:4] > table["equality"][:2]).all()
    again = run(["fixed:0.3"], [*GTB_SHORT, "seed=1"], chunk_size=1)
    assert again["equality_x_productivity"][0] == table["equality_x_productivity"][3]
    rand = run(["free-market"], GTB_SHORT, agents="random")
    assert rand["agents"][0] == "random" and np.isfinite(rand["equality"]).all()


def test_baseline_actions_respect_the_masks():
    masks = np.zeros((2, 3, 7), dtype=np.float32)  # NO-OP, build, 1 trade, 4 moves (3..6)
    masks[..., 0] = 1
    masks[0, 1, 1] = 1  # agent 1 of env 0 may build
    masks[1, 0, 6] = 1  # agent 0 of env 1 may also move down
    masks[1, 2, 0], masks[1, 2, 4] = 0, 1  # agent 2 of env 1 may only move right
    gens = [np.random.default_rng(i) for i in range(2)]
    assert gtb_env.builder_actions(masks, gens, 3).tolist() == [[0, 1, 0], [6, 0, 4]]
    draws = np.stack([gtb_env.random_actions(masks, gens) for _ in range(200)])
    assert set(draws[:, 0, 1].tolist()) == {0, 1} and set(draws[:, 1, 0].tolist()) == {0, 6}
    assert set(draws[:, 1, 2].tolist()) == {4} and set(draws[:, 0, 0].tolist()) == {0}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "fixed:0.1,0.2"], "2 rates; the tax has 7 brackets"),
        (["--policy", "fixed:1.5"], "rate 1.5 is outside"),
        (["--policy", "saes"], "Did you mean 'saez'"),
        (["--policy", "saez", "--agents", "smart"], "Unknown agents 'smart'"),
        (["--policy", "saez", "--days", "3"], "--days does not apply"),
        (["--policy", "saez", "--sweep", "isoelastic_eta=1.5"], "above the maximum 1"),
        (["--policy", "saez", "--sweep", "energy_cost=1"], "Unknown sweep parameter"),
        (["--policy", "saez", "--episodes", "0"], "episodes=0"),
        (["--policy", "checkpoint:/nonexistent/run"], "does not exist"),
        (["--policy", "saez", "--backend", "pycuda"], "runs on 'numpy'"),
    ],
)
def test_bad_input_exits_2_naming_it(tmp_path, capsys, args, message):
    full = ["--scenario", "one-step-economy", *args, "--out", str(tmp_path), "--no_progress"]
    assert main(full) == 2
    assert message in capsys.readouterr().err


def test_a_run_folder_without_checkpoints_exits_2(tmp_path, capsys):
    pytest.importorskip("torch")
    args = ["--scenario", "gather-trade-build", "--policy", "free-market", "--agents",
            f"checkpoint:{tmp_path}", "--sweep", "episode_length=2", "--out", str(tmp_path),
            "--no_progress"]  # fmt: skip
    assert main(args) == 2
    assert "no checkpoint (checkpoints/ckpt_<N>.pt)" in capsys.readouterr().err


def test_bad_group_value_is_a_simulate_error():
    with pytest.raises(SimulateError, match="one-step economy with"):
        ose.model_params({**_defaults(), "pareto_param": 0.0})
    assert parse_rates("fixed:0", "0", 3) == (0.0, 0.0, 0.0)


def test_frontier_and_welfare_plots(tmp_path):
    pytest.importorskip("matplotlib")
    table = _one_step(["free-market", "fixed:0.3"], {"labor_cost": [0.5, 0.7]}, episodes=1)
    from ai_economist.simulate.plots import write_economy_plots

    paths = write_economy_plots(table, tmp_path)
    assert [p.name for p in paths] == ["frontier.png", "welfare.png"]
    assert all(p.stat().st_size > 1000 for p in paths)


@pytest.fixture(scope="module")
def one_step_checkpoint(tmp_path_factory):
    """A checkpoint of the one-step economy whose models are zeros but for the policy heads'
    bias: the planner's greedy action is 5 in every bracket (rate 0.2), the agents' 40 hours."""
    torch = pytest.importorskip("torch")
    import copy

    from ai_economist.foundation.scenarios.one_step_economy.batched_env import (
        OneStepEconomyBatchedEnv,
    )
    from ai_economist.training.config import load_run_config, packaged_config_path
    from ai_economist.warp_drive.training.checkpoint import FORMAT_VERSION, save_checkpoint
    from ai_economist.warp_drive.training.models import build_policy_model

    config = load_run_config(packaged_config_path("one_step_economy"))
    env = OneStepEconomyBatchedEnv(num_envs=1, **config["env"])
    policies = {}
    for tag, spec in env.policy_specs.items():
        policy_config = copy.deepcopy(config["policy"][tag])
        model = build_policy_model(tag, policy_config, spec, torch.device("cpu"))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.zero_()
            model.policy_head.bias[5 if tag == "p" else 40] = 1.0
        policies[tag] = {"model": model.state_dict()}
    state = {"format_version": FORMAT_VERSION, "iteration": 0, "env_steps": 0,
             "config": config, "policies": policies, "ranks": 1}  # fmt: skip
    return save_checkpoint(tmp_path_factory.mktemp("run") / "checkpoints" / "ckpt_0.pt", state)


def test_checkpoint_planner_sets_its_greedy_rates(one_step_checkpoint):
    table = _one_step([f"checkpoint:{one_step_checkpoint}", "fixed:0.2"], greedy=True)
    learned, fixed = table.rows()
    assert [learned[c] for c in RATES] == pytest.approx([0.2] * 7, rel=1e-15)
    for name in ("equality", "productivity", "tax_revenue", "planner_welfare", "mean_labor"):
        assert learned[name] == pytest.approx(fixed[name], rel=1e-12)


def test_checkpoint_agents_work_their_greedy_hours(one_step_checkpoint):
    table = _one_step(["fixed:0.2"], agents=f"checkpoint:{one_step_checkpoint}", greedy=True)
    skills = ose.model_params(_defaults()).skills
    assert table["mean_labor"][0] == 40.0
    assert table["productivity"][0] == pytest.approx(40 * skills.sum(), rel=1e-12)
    assert table["tax_revenue"][0] == pytest.approx(0.2 * 40 * skills.sum(), rel=1e-12)


def test_sampled_checkpoint_actions_follow_each_runs_seed(one_step_checkpoint):
    agents = f"checkpoint:{one_step_checkpoint}"
    both = _one_step(["us-federal"], {"seed": [0, 1]}, agents=agents, episodes=1)
    again = _one_step(["us-federal"], {"seed": [1]}, agents=agents, episodes=1)
    assert both["productivity"][1] == again["productivity"][0]
    assert both["mean_labor"][0] != both["mean_labor"][1]


def test_a_checkpoint_of_another_environment_is_named(tmp_path):
    pytest.importorskip("torch")
    from ai_economist.warp_drive.training.checkpoint import FORMAT_VERSION, save_checkpoint

    state = {"format_version": FORMAT_VERSION, "iteration": 0, "env_steps": 0,
             "config": {"name": "toy"}, "policies": {}, "ranks": 1}  # fmt: skip
    path = save_checkpoint(tmp_path / "checkpoints" / "ckpt_0.pt", state)
    with pytest.raises(SimulateError, match="trained on 'toy'; .* 'one_step_economy'"):
        _one_step([f"checkpoint:{path}"], episodes=1)


@pytest.fixture(scope="module")
def gtb_checkpoint(tmp_path_factory):
    """A phase-2 checkpoint of zeros but for the policy heads' bias: the planner's greedy
    action is 7 in every bracket (rate 0.3), the agents' NO-OP (action 0)."""
    torch = pytest.importorskip("torch")
    import copy

    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        ArrayGatherTradeBuildBatch,
    )
    from ai_economist.simulate.economies import Choice
    from ai_economist.training.config import load_run_config, packaged_config_path
    from ai_economist.warp_drive.training.checkpoint import FORMAT_VERSION, save_checkpoint
    from ai_economist.warp_drive.training.models import build_policy_model

    config = load_run_config(packaged_config_path("gather_trade_build_phase2"))
    group = {n: p.default for n, p in gtb.PARAMETERS.items() if not p.per_run}
    group.update(episode_length=50, tax_period=25)
    batch = ArrayGatherTradeBuildBatch(gtb_env.env_config(group, Choice("c", "checkpoint")), 1)
    policies = {}
    for tag, spec in batch.policy_specs.items():
        policy_config = copy.deepcopy(config["policy"][tag])
        policy_config["model"]["model_ckpt_filepath"] = ""
        model = build_policy_model(tag, policy_config, spec, torch.device("cpu"))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.zero_()
            model.policy_head.bias[7 if tag == "p" else 0] = 1.0
        policies[tag] = {"model": model.state_dict()}
    state = {"format_version": FORMAT_VERSION, "iteration": 0, "env_steps": 0,
             "config": config, "policies": policies, "ranks": 1}  # fmt: skip
    return save_checkpoint(tmp_path_factory.mktemp("gtb") / "checkpoints" / "ckpt_0.pt", state)


def test_gather_trade_build_checkpoint_planner_and_agents(gtb_checkpoint):
    run = get_scenario("gather-trade-build").run
    policy = f"checkpoint:{gtb_checkpoint}"
    table = run([policy, "fixed:0.3"], [*GTB_SHORT, "seed=0,1"], greedy=True)
    assert [table[c][0] for c in gtb.RATE_COLUMNS] == pytest.approx([0.3] * 7, rel=1e-12)
    for name in ("productivity", "equality", "tax_revenue", "planner_welfare", "mean_labor"):
        assert table[name][:2] == pytest.approx(table[name][2:], rel=1e-9), name
    idle = run(["us-federal"], GTB_SHORT, agents=policy, greedy=True)  # NO-OP agents
    assert idle["productivity"][0] == 0.0 and idle["tax_revenue"][0] == 0.0
    assert idle["mean_labor"][0] < table["mean_labor"][2] / 10  # no moves, no builds


def test_a_checkpoint_planner_keeps_the_rate_limit_its_training_ended_with(
    gtb_checkpoint, tmp_path
):
    pytest.importorskip("torch")
    from ai_economist.warp_drive.training.checkpoint import load_checkpoint, save_checkpoint

    state = load_checkpoint(gtb_checkpoint)  # one 1,000-step episode per env: the annealing's
    state["env_steps"] = int(state["config"]["trainer"]["num_envs"]) * 1000  # first, 10%
    capped = save_checkpoint(tmp_path / "checkpoints" / "ckpt_1.pt", state)
    run = get_scenario("gather-trade-build").run
    table = run([f"checkpoint:{capped}"], [*GTB_SHORT, "seed=0"], greedy=True)
    # its greedy rate 0.3 is out of reach: the allowed actions (NO-OP, 0, 0.05, 0.1) tie, and
    # the first, NO-OP, keeps the initial rate 0
    assert [table[c][0] for c in gtb.RATE_COLUMNS] == [0.0] * 7
