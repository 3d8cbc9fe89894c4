"""The trainer on a CUDA GPU (run on a GPU machine with ``pytest -m gpu``)."""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

pytestmark = pytest.mark.gpu

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def make_trainer(tmp_path, config):
    env = ToyTargetEnv(num_envs=config["trainer"]["num_envs"], device="cuda", **config["env"])
    return Trainer(
        env, config, {"a": ["0", "1", "2"], "p": ["p"]}, results_directory=tmp_path, verbose=False
    )


@needs_cuda
def test_rollout_and_update_never_synchronise_with_the_host(tmp_path):
    config = toy_run_config(num_episodes=1000)
    trainer = make_trainer(tmp_path, config)
    trainer.train_iteration()  # warm-up (lazy initialisations may sync once)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            trainer.train_iteration()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    trainer.graceful_close()


@needs_cuda
def test_training_improves_the_objective_on_the_gpu(tmp_path):
    trainer = make_trainer(tmp_path, toy_run_config(num_episodes=120))
    metrics = trainer.train()
    trainer.graceful_close()
    assert metrics["a/reward_per_step"] > 0.9 and metrics["env/accuracy_a"] > 0.9
    assert next(trainer.policies["a"].model.parameters()).device.type == "cuda"


@needs_cuda
def test_cuda_graphs_replay_the_eager_rollout(tmp_path):
    results = []
    for graphs in (False, True):
        config = toy_run_config(num_episodes=40)  # 5 iterations
        config["trainer"]["cuda_graphs"] = graphs
        trainer = make_trainer(tmp_path / str(graphs), config)
        metrics = trainer.train()
        trainer.graceful_close()
        results.append((metrics, trainer.policies["a"].model.state_dict()))
    (m_eager, p_eager), (m_graph, p_graph) = results
    assert m_eager["a/loss"] == pytest.approx(m_graph["a/loss"], rel=1e-4)
    assert m_eager["env/accuracy_a"] == m_graph["env/accuracy_a"]
    for key, value in p_eager.items():
        assert torch.allclose(value, p_graph[key], atol=1e-5), key


@needs_cuda
def test_cuda_graph_rollout_never_synchronises(tmp_path):
    config = toy_run_config(num_episodes=1000)
    config["trainer"]["cuda_graphs"] = True
    trainer = make_trainer(tmp_path, config)
    trainer.train_iteration()  # captures the graphs
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        trainer.train_iteration()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    trainer.graceful_close()
