"""``model.type: conv_lstm`` on a GPU: the recurrent state lives in static buffers, so the
rollout graph and the whole-iteration graph train like the eager loop (episode ends inside
the rollouts included); gather-trade-build's maps reach the convolutions on the device.

Run on a GPU machine with ``pytest -m gpu``.
"""

from __future__ import annotations

import pytest
import torch

from ai_economist.training.config import default_config_path, load_run_config
from ai_economist.training.training_script import build_trainer

pytestmark = pytest.mark.gpu

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

CONV_LSTM = ["model.type=conv_lstm", "model.fc_dims=[32]", "model.lstm_size=16", "model.seq_len=5"]


def tag_trainer(tmp_path, graphs, update_graph):
    """tag_continuous on pycuda (capturable), 25-step rollouts over 50-step episodes."""
    overrides = [
        "trainer.num_envs=4",
        "trainer.train_batch_size=100",
        "trainer.num_episodes=100",
        "trainer.device=cuda",
        "trainer.env_backend=pycuda",
        f"trainer.cuda_graphs={str(graphs).lower()}",
        f"trainer.cuda_graph_update={str(update_graph).lower()}",
        "trainer.progress_bar=false",
        "saving.tensorboard=false",
        "env.num_runners=20",
        "env.episode_length=50",
        *[f"policy.{tag}.{o}" for tag in ("runner", "tagger") for o in CONV_LSTM],
    ]
    config = load_run_config(default_config_path("tag_continuous"), overrides)
    return build_trainer(config, torch.device("cuda"), results_directory=tmp_path, verbose=False)


def trained(trainer, iterations=5):
    for _ in range(iterations):
        trainer.train_iteration()
    torch.cuda.synchronize()
    params = {
        f"{tag}/{k}": v.detach().clone()
        for tag, p in trainer.policies.items()
        for k, v in p.model.state_dict().items()
    }
    memory = {t: s.clone() for t, s in trainer.rollout.recurrent.states.items()}
    trainer.graceful_close()
    return params, memory


@needs_cuda
@pytest.mark.parametrize("update_graph", [False, True])
def test_graphs_train_a_conv_lstm_like_the_eager_loop(tmp_path, update_graph):
    eager = tag_trainer(tmp_path / "eager", graphs=False, update_graph=False)
    graphed = tag_trainer(tmp_path / "graph", graphs=True, update_graph=update_graph)
    params_e, memory_e = trained(eager)
    params_g, memory_g = trained(graphed)
    if update_graph:
        assert graphed.iteration_graph is not None and graphed.iteration_graph.graph is not None
    else:
        assert graphed.rollout.graph_mode == "rollout"
    for tag, state in memory_e.items():  # 5 x 25 steps: 2 episode ends were crossed
        assert torch.allclose(state, memory_g[tag], atol=1e-4), tag
    for key, value in params_e.items():
        assert torch.allclose(value, params_g[key], atol=1e-4), key


@needs_cuda
def test_gather_trade_build_conv_lstm_trains_on_the_gpu(tmp_path):
    overrides = [
        "trainer.num_envs=4", "trainer.train_batch_size=40", "trainer.num_episodes=4",
        "env.episode_length=20", "trainer.device=cuda", "trainer.env_backend=numpy",
        "trainer.progress_bar=false", "saving.tensorboard=false", "env.dense_log_frequency=null",
        "policy.a.model.type=conv_lstm", "policy.a.model.seq_len=5",
    ]  # fmt: skip
    config = load_run_config(default_config_path("gather_trade_build_phase1"), overrides)
    trainer = build_trainer(config, torch.device("cuda"), results_directory=tmp_path, verbose=False)
    model = trainer.policies["a"].model
    assert len(model.convs) == 2 and model.embedding is not None
    before = {k: v.clone() for k, v in model.state_dict().items()}
    metrics = trainer.train()
    trainer.graceful_close()
    assert torch.isfinite(torch.tensor(metrics["a/loss"]))
    assert not torch.equal(before["convs.0.weight"], model.state_dict()["convs.0.weight"])
