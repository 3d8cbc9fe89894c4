"""Gather-trade-build (numpy backend) with ``policy.a.model.type=conv_lstm``: the agents'
maps reach the convolutions, the run checkpoints its LSTM states mid-episode, and a resume
equals the straight run bit for bit."""

from __future__ import annotations

import json

import pytest
import torch

from ai_economist.training import training_script
from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.models import load_policy_models

pytest.importorskip("torch")

# 4 steps of 2 envs per iteration, 6-step episodes: the checkpoint of iteration 2 is taken
# 2 steps into the second episode
TINY = ["trainer.num_envs=2", "trainer.train_batch_size=8", "env.episode_length=6",
        "trainer.env_backend=numpy", "saving.tensorboard=false", "trainer.progress_bar=false",
        "saving.metrics_log_freq=1", "policy.a.model.type=conv_lstm",
        "policy.a.model.fc_dims=[8]", "policy.a.model.conv_filters=[4]",
        "policy.a.model.lstm_size=8", "policy.a.model.seq_len=2",
        "policy.p.model.fc_dims=[8]", "env.dense_log_frequency=null",
        "saving.model_params_save_freq=100"]  # fmt: skip
ARGS = ["--env", "gather_trade_build_phase1", "--device", "cpu", "--quiet"]


def rows(run_dir):
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    timed = ("time/", "env_steps_per_s")
    return [{k: v for k, v in json.loads(line).items() if not k.startswith(timed)}
            for line in lines]  # fmt: skip


def test_conv_lstm_checkpoints_its_memory_and_resumes_exactly(tmp_path):
    straight, split = tmp_path / "straight", tmp_path / "split"
    full, half = "trainer.num_episodes=5", "trainer.num_episodes=2"  # 4 and 2 iterations
    assert training_script.main([*ARGS, "--results_dir", str(straight), *TINY, full]) == 0
    assert training_script.main([*ARGS, "--results_dir", str(split), *TINY, half]) == 0
    state = ckpt.load_checkpoint(ckpt.list_checkpoints(split)[-1])
    memory = state["ranks"][0]["recurrent"]
    assert set(memory) == {"a"} and memory["a"].shape == (2, 4, 16)
    assert (memory["a"].abs().sum(-1) > 0).all()  # mid-episode: a memory to carry on
    layout = state["policies"]["a"]["observation_layout"]
    assert [s[0] for s in layout] == ["flat", "world-map", "world-idx_map"]
    assert layout[1][1] == [7, 11, 11] and layout[2][2] == "index"
    assert "convs.0.weight" in state["policies"]["a"]["model"]  # the maps are convolved
    assert training_script.main(["--resume", str(split), "--quiet", full]) == 0
    assert [r["iteration"] for r in rows(split)] == [1, 2, 3, 4]
    assert rows(split) == rows(straight)
    a = ckpt.load_checkpoint(ckpt.list_checkpoints(straight)[-1])
    b = ckpt.load_checkpoint(ckpt.list_checkpoints(split)[-1])
    for name, value in a["policies"]["a"]["model"].items():
        assert torch.equal(value, b["policies"]["a"]["model"][name]), name
    # a checkpoint rebuilds the model on its own (evaluate), with its saved layout
    specs = {"a": type("Spec", (), {"obs_dim": 1225, "num_actions": 50, "num_agents": 4})}
    model = load_policy_models(a, specs)["a"]
    logits, values, new_state = model.step(torch.zeros(1, 4, 1225), model.initial_state(1, 4))
    assert logits.shape == (1, 4, 50) and new_state.shape == (1, 4, 16)


def test_every_gather_trade_build_batch_declares_the_same_agent_layout():
    from ai_economist.foundation.scenarios.simple_wood_and_stone import configs
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        ArrayGatherTradeBuildBatch,
    )
    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
        GatherTradeBuildBatch,
    )
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
        GatherTradeBuildWorldGpu,
    )
    from ai_economist.warp_drive.env_wrapper import EnvWrapper
    from ai_economist.warp_drive.obs_layout import ObsSegment, env_layout

    config = configs.env_config(configs.PHASE1_ENV_CONFIG)
    config.update(episode_length=3, dense_log_frequency=None)
    maps = (ObsSegment("world-map", (7, 11, 11)), ObsSegment("world-idx_map", (2, 11, 11), "index"))
    gpu = EnvWrapper(GatherTradeBuildWorldGpu(), num_envs=1, env_backend="numpy")
    for batch in (ArrayGatherTradeBuildBatch(config, 1), GatherTradeBuildBatch(config, 1), gpu):
        for tag, spec in batch.policy_specs.items():
            layout = env_layout(batch, tag, spec.obs_dim)  # checked against obs_dim
            if tag == "a":
                assert layout[1:] == maps, type(batch).__name__
            else:
                assert not any(s.spatial for s in layout)
