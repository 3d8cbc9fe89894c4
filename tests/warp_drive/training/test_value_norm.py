"""PopArt value normalisation: hand-computed statistics, preserved outputs, the trainer's use
of it (targets, GAE in reward units), checkpoints and mismatched resumes."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from ai_economist.warp_drive.training.checkpoint import CheckpointError
from ai_economist.warp_drive.training.gae import compute_gae
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer
from ai_economist.warp_drive.training.value_norm import ValueNormalizer

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def head(seed=0):
    torch.manual_seed(seed)
    return nn.Linear(5, 1).double()


def test_first_update_takes_the_batch_statistics_then_moving_averages():
    norm = ValueNormalizer(head(), decay=0.5)
    assert float(norm.mean) == 0.0 and float(norm.std) == 1.0  # identity before any data
    norm.update(torch.tensor([1.0, 3.0]))  # mean 2, E[x^2] 5, variance 1
    assert float(norm.mean) == pytest.approx(2.0) and float(norm.std) == pytest.approx(1.0)
    norm.update(torch.tensor([10.0, 10.0]))
    # weights 0.25 (first batch) and 0.5 (second) of a total 0.75, by hand:
    mean = (0.25 * 2 + 0.5 * 10) / 0.75
    second = (0.25 * 5 + 0.5 * 100) / 0.75
    assert float(norm.mean) == pytest.approx(mean, rel=1e-6)
    assert float(norm.std) == pytest.approx(math.sqrt(second - mean**2), rel=1e-6)
    x = torch.tensor([0.0, 7.5])
    assert torch.allclose(norm.denormalize(norm.normalize(x)), x, atol=1e-5)


def test_an_update_rescales_the_head_so_its_outputs_in_reward_units_stay():
    h = head()
    norm = ValueNormalizer(h, decay=0.9)
    hidden = torch.randn(64, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    for batch in ([100.0, 180.0, 150.0], [5.0, -40.0], [0.3, 0.3, 0.3]):
        with torch.no_grad():
            before = norm.denormalize(h(hidden).squeeze(-1).float())
        norm.update(torch.tensor(batch))
        with torch.no_grad():
            after = norm.denormalize(h(hidden).squeeze(-1).float())
        torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-4)


def test_constant_targets_do_not_blow_the_scale_up():
    norm = ValueNormalizer(head())
    norm.update(torch.full((10,), 4.0))
    assert float(norm.std) == pytest.approx(0.01)  # the variance floor, 1e-4
    assert float(norm.mean) == pytest.approx(4.0)


def test_a_model_without_a_one_output_linear_value_head_is_refused():
    with pytest.raises(ValueError, match="value head"):
        ValueNormalizer(None)
    with pytest.raises(ValueError, match="value head"):
        ValueNormalizer(nn.Linear(4, 2))


def make_trainer(config, run_dir=None, resume=None):
    env = ToyTargetEnv(num_envs=config["trainer"]["num_envs"], **config["env"])
    return Trainer(
        env, config, AGENT_MAP, results_directory=run_dir, verbose=False, resume_from=resume
    )


def normalized_config(iterations=3):
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=iterations * 2)
    config["saving"]["model_params_save_freq"] = 2
    for tag in ("a", "p"):
        config["policy"][tag]["normalize_value"] = True
    return config


def test_the_trainer_fits_normalised_returns_and_runs_gae_in_reward_units(tmp_path):
    trainer = make_trainer(normalized_config(), tmp_path / "run")
    try:
        trainer.train_iteration()
        p = trainer.policies["a"]
        norm = p.value_norm
        moments = norm.moments.clone()
        # what the trainer computed, recomputed by hand from the buffers of the next rollout
        trainer._collect_rollout()
        buf, last = p.buffer, trainer.rollout.last_values["a"]
        gamma, lam = p.config["gamma"], p.config["gae_lambda"]
        _, returns = compute_gae(
            buf.rewards, norm.denormalize(buf.values), trainer.dones, norm.denormalize(last),
            gamma, lam,
        )  # fmt: skip
        x = returns.double().reshape(-1)
        d = norm.decay
        want = moments.clone()
        want[:2] = d * moments[:2] + (1 - d) * torch.stack([x.mean(), (x * x).mean()])
        want[2] = d * moments[2] + (1 - d)
        trainer._update()
        torch.testing.assert_close(norm.moments, want)
        assert norm.moments[2] > 0 and float(norm.std) > 0.0
    finally:
        trainer.graceful_close()


def test_checkpoints_keep_the_statistics_and_a_resume_continues_exactly(tmp_path):
    straight = make_trainer(normalized_config(4), tmp_path / "straight")
    straight.train()
    straight.graceful_close()
    half = normalized_config(4)
    half["trainer"]["num_episodes"] = 4  # 2 iterations, a checkpoint at 2
    first = make_trainer(half, tmp_path / "split")
    first.train()
    first.graceful_close()
    resumed = make_trainer(normalized_config(4), None, resume=tmp_path / "split")
    resumed.train()
    resumed.graceful_close()
    for tag in AGENT_MAP:
        assert torch.equal(
            straight.policies[tag].value_norm.moments, resumed.policies[tag].value_norm.moments
        )
        a, b = straight.policies[tag].model.state_dict(), resumed.policies[tag].model.state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a), tag


def test_resuming_with_normalize_value_switched_is_refused_by_name(tmp_path):
    half = normalized_config(4)
    half["trainer"]["num_episodes"] = 4
    make_trainer(half, tmp_path / "split").train()
    switched = normalized_config(4)
    switched["policy"]["a"]["normalize_value"] = False
    with pytest.raises(CheckpointError, match="policy.a.normalize_value"):
        make_trainer(switched, None, resume=tmp_path / "split")
