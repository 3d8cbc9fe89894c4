"""The published command is fast by default on a GPU: ``trainer.cuda_graphs`` ``auto`` turns the
rollout and iteration graphs on for the COVID-19 env on ``pycuda``, and trains like the eager loop
(``cuda_graphs=false``), as ``test_rollout_graph_gpu.py`` shows for explicit settings."""

from __future__ import annotations

import pytest
import torch

from ai_economist.training.config import default_config_path, load_run_config
from ai_economist.training.training_script import build_trainer

pytestmark = pytest.mark.gpu
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _trained(tmp_path, *overrides, iterations=4):
    steps = 45
    config = load_run_config(
        default_config_path("covid_and_economy_environment"),
        ["trainer.device=cuda", "trainer.num_envs=4", f"trainer.train_batch_size={4 * steps}",
         "trainer.progress_bar=false", "saving.tensorboard=false", *overrides],
    )  # fmt: skip
    trainer = build_trainer(config, torch.device("cuda"), results_directory=tmp_path, verbose=False)
    for _ in range(iterations):
        trainer.train_iteration()
    torch.cuda.synchronize()
    params = {
        f"{tag}/{k}": v.detach().clone()
        for tag, p in trainer.policies.items()
        for k, v in p.model.state_dict().items()
    }
    rewards = {tag: p.buffer.rewards.clone() for tag, p in trainer.policies.items()}
    trainer.graceful_close()
    return trainer, params, rewards


@needs_cuda
def test_the_published_command_uses_the_graphs_by_default_and_trains_like_the_eager_loop(tmp_path):
    graphed, params_g, rewards_g = _trained(tmp_path / "default")
    assert graphed.config["trainer"]["cuda_graphs"] == "auto" and graphed.cuda_graphs
    assert graphed.iteration_graph is not None and graphed.iteration_graph.graph is not None
    eager, params_e, rewards_e = _trained(tmp_path / "eager", "trainer.cuda_graphs=false")
    assert not eager.cuda_graphs and eager.rollout.graph_mode == "off"
    assert graphed.env_steps == eager.env_steps
    for tag, value in rewards_e.items():
        assert torch.allclose(value, rewards_g[tag], atol=1e-5), tag
    for key, value in params_e.items():
        assert torch.allclose(value, params_g[key], atol=1e-5), key
