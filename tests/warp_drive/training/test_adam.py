"""Our Adam steps exactly as torch.optim.Adam, and a training run never imports torch._dynamo."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from ai_economist.warp_drive.training.adam import Adam

OPTION_SETS = [
    {"lr": 1e-2, "eps": 1e-5},
    {"lr": 3e-3, "weight_decay": 0.1, "amsgrad": True},
    {"lr": 1e-2, "foreach": True, "maximize": True},
    {"lr": 5e-3, "betas": (0.8, 0.99), "decoupled_weight_decay": True, "weight_decay": 0.01},
]


def run_steps(optimizer_class, options, device="cpu", steps=6, swap_state_at=None):
    """Six steps on two parameters with seeded gradients; the final parameters and state."""
    generator = torch.Generator().manual_seed(0)
    params = [
        torch.randn(5, 3, generator=generator).to(device).requires_grad_(),
        torch.randn(7, generator=generator).to(device).requires_grad_(),
    ]
    optimizer = optimizer_class(params, **options)
    for step in range(steps):
        for p in params:
            p.grad = torch.randn(p.shape, generator=generator).to(device)
        optimizer.step()
        if step == swap_state_at:  # continue in the other class from a saved state
            saved = optimizer.state_dict()
            other = Adam if optimizer_class is torch.optim.Adam else torch.optim.Adam
            optimizer = other(params, **options)
            optimizer.load_state_dict(saved)
        optimizer.zero_grad()
    return [p.detach().cpu().clone() for p in params], optimizer.state_dict()


@pytest.mark.parametrize("options", OPTION_SETS)
def test_steps_bit_for_bit_as_torch_adam(options):
    ours, our_state = run_steps(Adam, options)
    theirs, their_state = run_steps(torch.optim.Adam, options)
    for a, b in zip(ours, theirs):
        assert torch.equal(a, b)
    for key in ("exp_avg", "exp_avg_sq", "step"):
        for index in (0, 1):
            assert torch.equal(our_state["state"][index][key], their_state["state"][index][key])
    assert our_state["param_groups"] == their_state["param_groups"]


def test_state_dicts_load_across_the_two_classes():
    options = OPTION_SETS[0]
    reference, _ = run_steps(torch.optim.Adam, options)
    for start in (Adam, torch.optim.Adam):
        swapped, _ = run_steps(start, options, swap_state_at=2)
        assert all(torch.equal(a, b) for a, b in zip(swapped, reference))


def test_it_is_a_torch_adam_and_takes_a_param_group_later():
    first, second = torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)
    optimizer = Adam([first], lr=0.1)
    optimizer.add_param_group({"params": [second], "lr": 0.5})
    assert isinstance(optimizer, torch.optim.Adam)
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]
    second.grad = torch.ones(3)
    optimizer.step()
    assert torch.allclose(second.detach(), torch.full((3,), -0.5))  # Adam's first step: -lr


def imports_dynamo(code: str) -> bool:
    script = textwrap.dedent(code) + "\nimport sys\nprint('torch._dynamo' in sys.modules)\n"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1] == "True"


def test_our_adam_never_imports_dynamo_where_torch_adam_does():
    steps = """
        import torch
        p = torch.zeros(3, requires_grad=True)
        opt = {cls}([p], lr=0.1)
        p.grad = torch.ones(3)
        opt.step(); opt.zero_grad(); opt.load_state_dict(opt.state_dict())
    """
    steps = textwrap.dedent(steps)
    ours = "from ai_economist.warp_drive.training.adam import Adam\n" + steps
    assert not imports_dynamo(ours.format(cls="Adam"))
    assert imports_dynamo(steps.format(cls="torch.optim.Adam"))  # what the class avoids


def test_a_training_run_with_checkpoints_never_imports_dynamo(tmp_path):
    assert not imports_dynamo(
        f"""
        from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
        from ai_economist.warp_drive.training.trainer import Trainer
        config = toy_run_config(num_episodes=16)
        env = ToyTargetEnv(num_envs=config["trainer"]["num_envs"], **config["env"])
        agents = {{"a": ["0", "1", "2"], "p": ["p"]}}
        trainer = Trainer(env, config, agents, True, "first",
                          results_directory={str(tmp_path)!r}, verbose=False)
        trainer.train()
        trainer.save_checkpoint()
        trainer.graceful_close()
        """
    )


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("fused", [True, False])
def test_fused_and_foreach_steps_on_the_gpu_equal_torch_adam(fused):
    options = {"lr": 1e-3, "eps": 1e-5, "fused": fused}
    ours, _ = run_steps(Adam, options, device="cuda")
    theirs, _ = run_steps(torch.optim.Adam, options, device="cuda")
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))
