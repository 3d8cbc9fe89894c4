"""The fused sampling kernel's CPU side: when the rollout uses it, its config key, the torch
reference it mirrors, and (where Triton is installed) the kernel itself in Triton's CPU
interpreter.  The kernel on a GPU: ``test_fused_sampling_gpu.py``."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
import torch

from ai_economist.warp_drive.training import fused_sampling as fs
from ai_economist.warp_drive.training.models import (
    MASKED_LOGIT,
    draw_gumbel,
    mask_logits,
    sample_masked,
)
from ai_economist.warp_drive.training.schema import ConfigError, validate_config
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def test_the_fused_kernel_needs_cuda_a_twin_and_the_key(monkeypatch):
    assert not fs.fused_sampling_supported("cpu")
    monkeypatch.setattr(fs.fused_sampling_cuda, "cuda_c_available", lambda: False)
    monkeypatch.setattr(fs, "triton_available", lambda: True)
    assert fs.fused_sampling_supported("cuda")
    assert not fs.fused_sampling_supported(torch.device("cuda", 1), enabled=False)
    assert not fs.fused_sampling_supported("cuda", kernel="cuda_c")  # no nvcc
    monkeypatch.setattr(fs, "triton_available", lambda: False)
    assert not fs.fused_sampling_supported("cuda")
    monkeypatch.setattr(fs.fused_sampling_cuda, "cuda_c_available", lambda: True)
    assert fs.fused_sampling_supported("cuda")
    assert not fs.fused_sampling_supported("cuda", kernel="triton")


def test_auto_prefers_the_cuda_c_twin(monkeypatch):
    monkeypatch.setattr(fs, "triton_available", lambda: True)
    monkeypatch.setattr(fs.fused_sampling_cuda, "cuda_c_available", lambda: True)
    assert fs.fused_sampling_kernel("auto") == "cuda_c"
    assert fs.fused_sampling_kernel("triton") == "triton"
    monkeypatch.setattr(fs.fused_sampling_cuda, "cuda_c_available", lambda: False)
    assert fs.fused_sampling_kernel("auto") == "triton"
    assert fs.fused_sampling_kernel("cuda_c") is None
    with pytest.raises(ValueError, match="'cuda'.*expected one of"):
        fs.fused_sampling_kernel("cuda")


def test_the_kernel_key_is_checked():
    config = toy_run_config()
    assert validate_config(config)["trainer"]["fused_sampling_kernel"] == "auto"
    config["trainer"]["fused_sampling_kernel"] = "triton"
    assert validate_config(config)["trainer"]["fused_sampling_kernel"] == "triton"
    config["trainer"]["fused_sampling_kernel"] = "cuda"
    with pytest.raises(ConfigError, match="trainer.fused_sampling_kernel"):
        validate_config(config)


def test_the_cpu_rollout_takes_the_torch_path(tmp_path):
    config = toy_run_config(num_episodes=8)
    assert (
        validate_config(config)["trainer"]["fused_sampling"] is True
    )  # the default: on where supported
    env = ToyTargetEnv(num_envs=8, **config["env"])
    trainer = Trainer(env, config, AGENT_MAP, True, "first", results_directory=tmp_path,
                      verbose=False)  # fmt: skip
    assert not trainer.rollout.fused_sampling and trainer.rollout.sample is fs.sample_reference
    trainer.train_iteration()
    buf = trainer.policies["a"].buffer
    assert torch.equal(env.actions("a").long(), buf.actions[-1])  # the env got the last actions
    trainer.graceful_close()


def test_the_key_is_a_bool():
    config = toy_run_config(fused_sampling=False)
    assert validate_config(config)["trainer"]["fused_sampling"] is False
    with pytest.raises(ConfigError, match="trainer.fused_sampling"):
        validate_config(toy_run_config(fused_sampling="yes"))


def test_the_reference_samples_and_copies_by_hand():
    logits = torch.tensor([[0.0, 1.0, 2.0], [5.0, 5.0, 5.0]])
    masks = torch.tensor([[True, True, False], [False, True, True]])
    gumbel = torch.zeros(2, 3)  # no noise: the most likely allowed action, ties to the first
    values = torch.tensor([0.5, -2.0])
    out = (torch.full((2,), -1), torch.zeros(2), torch.zeros(2))
    env_actions = torch.zeros(2, dtype=torch.int32)
    fs.sample_reference(logits, masks, gumbel, values, out, env_actions)
    assert out[0].tolist() == [1, 1] and env_actions.tolist() == [1, 1]
    expected = [1.0 - math.log(1.0 + math.e), -math.log(2.0)]
    assert torch.allclose(out[1], torch.tensor(expected), atol=1e-6)
    assert torch.equal(out[2], values)


def test_bad_shapes_and_dtypes_are_named():
    logits, masks, gumbel = torch.zeros(4, 3), torch.ones(4, 3, dtype=torch.bool), torch.zeros(4, 3)
    out = (torch.zeros(4, dtype=torch.long), torch.zeros(4), torch.zeros(4))
    env = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(ValueError, match="logits must be float32 or bfloat16"):
        fs.fused_sample(logits.double(), masks, gumbel, torch.zeros(4), out, env)
    with pytest.raises(ValueError, match="masks has 2 actions, expected 3"):
        fs.fused_sample(logits, masks[:, :2], gumbel, torch.zeros(4), out, env)
    with pytest.raises(ValueError, match="values has 5 elements, expected 4"):
        fs.fused_sample(logits, masks, gumbel, torch.zeros(5), out, env)
    with pytest.raises(ValueError, match="env_actions must be a contiguous"):
        fs.fused_sample(logits, masks, gumbel, torch.zeros(4), out, torch.zeros(4, 2)[:, 0])


def hard_case(n: int, num_actions: int, dtype: torch.dtype, seed: int = 0) -> tuple:
    """Joint-head-like input: logits a view of ``(n, A + 1)`` whose last column is the value;
    rows with one allowed action, with none, with ties (equal logits and noise), with huge
    negative logits."""
    gen = torch.Generator().manual_seed(seed)
    joint = torch.randn(n, num_actions + 1, generator=gen) * 4
    joint[::5, 1] = MASKED_LOGIT  # -inf-like logits
    logits, values = joint[:, :-1], joint[:, -1]
    masks = torch.rand(n, num_actions, generator=gen) > 0.4
    masks[::7] = False
    masks[::7, 2] = True  # one allowed action
    masks[3::11] = False  # none allowed: every score rounds to the fill, action 0 as in torch
    gumbel = draw_gumbel(torch.empty(n, num_actions), gen)
    logits[1::9, :4], gumbel[1::9, :4] = 1.5, 0.25  # ties: the first index wins
    return (logits.to(dtype) if dtype != torch.float32 else logits), masks, gumbel, values


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
N_ROWS = 3 * fs.ROWS_PER_PROGRAM + 5  # a partial last block of rows


def run_kernel_in_interpreter(path: str) -> None:
    """Run the kernel on the CPU (Triton's interpreter) for each dtype; save the outputs."""
    results = {}
    for name, dtype in DTYPES.items():
        logits, masks, gumbel, values = hard_case(N_ROWS, 11, dtype)
        out = (torch.full((N_ROWS,), -1), torch.zeros(N_ROWS), torch.zeros(N_ROWS))
        env_actions = torch.full((N_ROWS,), -1, dtype=torch.int32)
        fs.fused_sample(logits, masks, gumbel, values, out, env_actions)
        results[name] = (*out, env_actions)
    torch.save(results, path)


def test_the_kernel_in_the_triton_interpreter_matches_sample_masked(tmp_path):
    pytest.importorskip("triton")
    # TRITON_INTERPRET must be set before Triton is imported: a process of its own, so that
    # this process's Triton (e.g. the GPU tests') stays compiled
    path = tmp_path / "fused.pt"
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    code = f"import runpy; runpy.run_path({__file__!r})['run_kernel_in_interpreter']({str(path)!r})"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    results = torch.load(path)
    for name, dtype in DTYPES.items():
        logits, masks, gumbel, values = hard_case(N_ROWS, 11, dtype)
        actions, log_probs = sample_masked(logits, masks, gumbel=gumbel)
        if dtype == torch.bfloat16:  # as torch on CUDA: float32 math, rounded once at the end
            # (torch on the CPU also rounds intermediate values to bfloat16)
            log_p = torch.log_softmax(mask_logits(logits, masks).float(), dim=-1)
            log_probs = log_p.gather(-1, actions[:, None])[:, 0].to(dtype).float()
        fused_actions, fused_log_probs, fused_values, env_actions = results[name]
        assert torch.equal(fused_actions, actions) and torch.equal(env_actions.long(), actions)
        assert torch.equal(fused_values, values)
        # the sum over the actions runs in another order: a float32 step or two apart, which
        # for bfloat16 may be one bfloat16 step at a rounding edge
        rtol = 1e-6 if dtype == torch.float32 else 2**-7
        torch.testing.assert_close(fused_log_probs, log_probs, atol=1e-6, rtol=rtol)
        assert torch.equal(fused_log_probs.to(dtype).float(), fused_log_probs)  # bf16 values
