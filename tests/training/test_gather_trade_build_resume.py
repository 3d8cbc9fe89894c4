"""Gather-trade-build's batched array envs (numpy backend) resume bit for bit: N iterations
straight equal N/2, a resume from the checkpoint (mid-episode), then N/2 more."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ai_economist.training import training_script
from ai_economist.warp_drive.training import checkpoint as ckpt

pytest.importorskip("torch")

# 4 steps of 2 envs per iteration, 6-step episodes: the checkpoint of iteration 2 is taken
# 2 steps into the second episode
TINY = ["trainer.num_envs=2", "trainer.train_batch_size=8", "env.episode_length=6",
        "trainer.env_backend=numpy", "saving.tensorboard=false", "trainer.progress_bar=false",
        "saving.metrics_log_freq=1", "policy.a.model.fc_dims=[8]", "policy.p.model.fc_dims=[8]",
        "env.dense_log_frequency=null", "saving.model_params_save_freq=100"]  # fmt: skip


def rows(run_dir):
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    timed = ("time/", "env_steps_per_s")
    return [{k: v for k, v in json.loads(line).items() if not k.startswith(timed)}
            for line in lines]  # fmt: skip


def weights(run_dir):
    state = ckpt.load_checkpoint(ckpt.list_checkpoints(run_dir)[-1])
    return state["iteration"], {t: p["model"] for t, p in state["policies"].items()}


def test_resumed_run_equals_the_straight_one(tmp_path):
    args = ["--env", "gather_trade_build_phase1", "--device", "cpu", "--quiet"]
    straight, split = tmp_path / "straight", tmp_path / "split"
    full, half = "trainer.num_episodes=5", "trainer.num_episodes=2"  # 4 and 2 iterations
    assert training_script.main([*args, "--results_dir", str(straight), *TINY, full]) == 0
    assert training_script.main([*args, "--results_dir", str(split), *TINY, half]) == 0
    state = ckpt.load_checkpoint(ckpt.list_checkpoints(split)[-1])
    assert "economy/world/rngs" in state["ranks"][0]["env"]  # the envs' own state
    assert training_script.main(["--resume", str(split), "--quiet", full]) == 0
    assert [r["iteration"] for r in rows(split)] == [1, 2, 3, 4]
    assert rows(split) == rows(straight)
    (it_a, models_a), (it_b, models_b) = weights(straight), weights(split)
    assert it_a == it_b == 4
    for tag, params in models_a.items():
        for name, value in params.items():
            assert torch.equal(value, models_b[tag][name]), (tag, name)


def saez_config(configs):
    """Phase 2 with the Saez tax model and a 2-step tax period (its buffers fill at once)."""
    config = configs.env_config(configs.PHASE2_ENV_CONFIG)
    for component in config["components"]:
        if "PeriodicBracketTax" in component:
            component["PeriodicBracketTax"].update(tax_model="saez", period=2)
    return config


@pytest.mark.parametrize("economy", ["phase1", "saez"])
def test_a_saved_batch_state_restores_exactly_and_mismatches_are_named(economy):
    from ai_economist.foundation.scenarios.simple_wood_and_stone import configs
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        ArrayGatherTradeBuildBatch,
    )
    from ai_economist.warp_drive.env_state import EnvStateMismatch

    if economy == "saez":
        config = saez_config(configs)
    else:
        config = configs.env_config(configs.PHASE1_ENV_CONFIG)
    config.update(episode_length=6, dense_log_frequency=None)
    rng = np.random.default_rng(0)

    def step(batch, actions):
        batch.actions("a")[:] = torch.from_numpy(actions)
        batch.step_all_envs()
        return batch.observations("a").clone(), batch.rewards("a").clone()

    a = ArrayGatherTradeBuildBatch(config, num_envs=2, seed=3)
    moves = [rng.integers(0, 5, size=(2, 4)).astype(np.int32) for _ in range(10)]
    for m in moves[:3]:
        step(a, m)
    saved = a.state_dict()
    if economy == "saez":  # the trackers hold samples of the first tax period
        assert all(len(t["local_buffer"]) == 4 for t in saved["economy/tax/saez"])
    b = ArrayGatherTradeBuildBatch(config, num_envs=2, seed=99)  # other generators
    b.load_state_dict(saved)
    for m in moves[3:]:
        obs_a, rew_a = step(a, m)
        obs_b, rew_b = step(b, m)
        assert torch.equal(obs_a, obs_b) and torch.equal(rew_a, rew_b)
        assert torch.equal(a.observations("p"), b.observations("p"))
        if a.done().any():
            a.reset_only_done_envs()
            b.reset_only_done_envs()  # the reset draws from the restored generators
    if economy == "saez":
        for ta, tb in zip(a.state.tax.saez, b.state.tax.saez, strict=True):
            assert ta._local_saez_buffer == tb._local_saez_buffer
            assert np.array_equal(ta.running_avg_tax_rates, tb.running_avg_tax_rates)
    other = ArrayGatherTradeBuildBatch(config, num_envs=3, seed=0)
    with pytest.raises(EnvStateMismatch, match="has shape"):
        other.load_state_dict(saved)
