"""``trainer.bf16_obs_buffer``: the rollout's observations kept in bfloat16 for a bf16 update,
while acting still reads the env's float32 observations."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from ai_economist.warp_drive.training.rollout import RolloutBuffer
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def make_trainer(tmp_path, **trainer_settings):
    config = toy_run_config(num_episodes=16)
    config["trainer"].update(trainer_settings)
    env = ToyTargetEnv(num_envs=config["trainer"]["num_envs"], **config["env"])
    return Trainer(env, config, AGENT_MAP, True, "first", results_directory=tmp_path, verbose=False)


@pytest.mark.parametrize(
    "flag,precision,device,expected",
    [
        (True, "bf16", "cuda", torch.bfloat16),
        (True, "fp32", "cuda", torch.float32),  # an fp32 update reads float32
        (False, "bf16", "cuda", torch.float32),  # the default
        (True, "bf16", "cpu", torch.float32),  # no bf16 update on the CPU
    ],
)
def test_the_buffer_is_bf16_only_for_a_bf16_update_on_a_gpu(flag, precision, device, expected):
    trainer = SimpleNamespace(
        config={"trainer": {"bf16_obs_buffer": flag, "precision": precision}},
        device=torch.device(device),
    )
    assert Trainer._obs_buffer_dtype(trainer) == expected


def test_a_cpu_trainer_keeps_float32_observations(tmp_path):
    trainer = make_trainer(tmp_path, bf16_obs_buffer=True)
    assert all(p.buffer.obs.dtype == torch.float32 for p in trainer.policies.values())
    trainer.graceful_close()


def test_bf16_observations_are_the_rounded_float32_ones_and_acting_is_unchanged(tmp_path):
    """The same rollout with a float32 and a bfloat16 observation buffer: the same actions and
    log-probabilities (acting read the env's float32 observations), and the bf16 buffer holds
    the float32 observations rounded to bfloat16."""
    rollouts = []
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        torch.manual_seed(0)
        trainer = make_trainer(tmp_path / name)
        for p in trainer.policies.values():
            p.buffer = RolloutBuffer.allocate(
                p.spec, trainer.num_steps, trainer.num_envs, trainer.device, dtype
            )
        trainer._collect_rollout()
        rollouts.append({t: p.buffer for t, p in trainer.policies.items()})
        trainer.graceful_close()
    fp32, bf16 = rollouts
    for tag, buf in fp32.items():
        assert bf16[tag].obs.dtype == torch.bfloat16
        assert torch.equal(bf16[tag].obs, buf.obs.to(torch.bfloat16)), tag
        assert buf.obs.abs().sum() > 0 and not torch.equal(buf.obs, bf16[tag].obs.float())
        assert torch.equal(bf16[tag].actions, buf.actions), tag
        assert torch.equal(bf16[tag].log_probs, buf.log_probs), tag
