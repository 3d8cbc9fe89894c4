"""``checkpoint:PATH`` policies: a trainer checkpoint's models drive the batched model."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai_economist.simulate import SimulateError, run_sweep  # noqa: E402

DAYS = 12


@pytest.fixture(scope="module")
def zero_checkpoint(tmp_path_factory):
    """A checkpoint of the CPU demo config whose models are all zeros: every action equally
    likely, so the greedy action is action 0 (the states' NO-OP, subsidy level 0)."""
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment
    from ai_economist.training.config import load_run_config, packaged_config_path
    from ai_economist.warp_drive.training.checkpoint import FORMAT_VERSION, save_checkpoint
    from ai_economist.warp_drive.training.models import build_policy_model

    config = load_run_config(packaged_config_path("covid_and_economy_cpu_demo"))
    wrapper = FoundationEnvWrapper(
        CovidAndEconomyEnvironment(**config["env"]), num_envs=1, env_backend="numpy"
    )
    policies = {}
    for tag, spec in wrapper.policy_specs.items():
        policy_config = copy.deepcopy(config["policy"][tag])
        policy_config["model"]["model_ckpt_filepath"] = ""
        model = build_policy_model(tag, policy_config, spec, torch.device("cpu"))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.zero_()
        policies[tag] = {"model": model.state_dict()}
    state = {"format_version": FORMAT_VERSION, "iteration": 0, "env_steps": 0,
             "config": config, "policies": policies, "ranks": 1}  # fmt: skip
    path = tmp_path_factory.mktemp("run") / "checkpoints" / "ckpt_0.pt"
    return save_checkpoint(path, state)


def test_greedy_zero_model_is_the_no_op_schedule(zero_checkpoint):
    table = run_sweep([f"checkpoint:{zero_checkpoint}", "fixed:0,0,0,0"], days=DAYS, greedy=True)
    learned, no_op = table["planner_reward"]
    assert learned == pytest.approx(no_op, rel=1e-5)  # float32 reward buffers vs float64
    assert table["deaths_thousands"][0] == table["deaths_thousands"][1]  # same actions


def test_sampled_actions_follow_each_runs_seed(zero_checkpoint):
    policy = f"checkpoint:{zero_checkpoint}"
    both = run_sweep([policy], {"seed": [0, 1]}, days=DAYS)
    alone = run_sweep([policy], {"seed": [1]}, days=DAYS)
    assert both["planner_reward"][0] != both["planner_reward"][1]
    assert both["planner_reward"][1] == alone["planner_reward"][0]  # not the batch's neighbours
    assert np.isfinite(both["deaths_thousands"]).all()


def test_a_checkpoint_of_another_environment_is_named(tmp_path):
    from ai_economist.warp_drive.training.checkpoint import FORMAT_VERSION, save_checkpoint

    state = {"format_version": FORMAT_VERSION, "iteration": 0, "env_steps": 0,
             "config": {"name": "toy"}, "policies": {}, "ranks": 1}  # fmt: skip
    path = save_checkpoint(tmp_path / "checkpoints" / "ckpt_0.pt", state)
    with pytest.raises(SimulateError, match="trained on 'toy'"):
        run_sweep([f"checkpoint:{path}"], days=2)


def test_policy_inference_uses_one_thread_without_autograd_and_restores():
    import torch

    from ai_economist.simulate.checkpoints import policy_inference

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with policy_inference():
            assert torch.get_num_threads() == 1
            assert not torch.is_grad_enabled()
        assert torch.get_num_threads() == 2 and torch.is_grad_enabled()
        with pytest.raises(RuntimeError), policy_inference():
            raise RuntimeError("a failing run")
        assert torch.get_num_threads() == 2  # restored after an error too
    finally:
        torch.set_num_threads(before)
