"""``trainer.update_graphs`` on a GPU: each policy's update replayed from a CUDA graph trains
like the eager update (run on a GPU machine with ``pytest -m gpu``).

A replay launches the kernels the eager update launches; only the learning rate differs in
form (a float32 device tensor instead of a Python float), so weights and losses agree to a
few ulps, not necessarily bit for bit.
"""

from __future__ import annotations

import pytest
import torch

from ai_economist.training.config import default_config_path, load_run_config
from ai_economist.training.training_script import build_trainer as build_registered
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

pytestmark = pytest.mark.gpu

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

ITERATIONS = 5
TOLERANCE = {"atol": 1e-5, "rtol": 1e-4}


def toy_trainer(tmp_path, update_graphs, precision="fp32", compile_update=False, minibatches=1):
    config = toy_run_config(
        num_episodes=1000, cuda_graphs=True, update_graphs=update_graphs, precision=precision,
        compile_update=compile_update,
    )  # fmt: skip
    for pcfg in config["policy"].values():
        pcfg["num_epochs"], pcfg["num_mini_batches"] = 1, minibatches
    env = ToyTargetEnv(num_envs=8, device="cuda", **config["env"])
    agents = {"a": ["0", "1", "2"], "p": ["p"]}
    return Trainer(env, config, agents, results_directory=tmp_path, verbose=False)


def covid_trainer(tmp_path, update_graphs, precision="fp32"):
    overrides = [
        "trainer.num_envs=4", "trainer.train_batch_size=180", "trainer.num_episodes=100",
        "trainer.device=cuda", "trainer.env_backend=pycuda", "trainer.cuda_graphs=true",
        f"trainer.update_graphs={str(update_graphs).lower()}", f"trainer.precision={precision}",
        "trainer.progress_bar=false", "saving.tensorboard=false",
    ]  # fmt: skip
    for tag in ("a", "p"):
        overrides += [f"policy.{tag}.num_epochs=1", f"policy.{tag}.num_mini_batches=1"]
    config = load_run_config(default_config_path("covid_and_economy_environment"), overrides)
    return build_registered(config, torch.device("cuda"), results_directory=tmp_path, verbose=False)


def trained(trainer, iterations=ITERATIONS):
    for _ in range(iterations):
        trainer.train_iteration()
    torch.cuda.synchronize()
    weights = {
        f"{tag}/{k}": v.detach().clone()
        for tag, p in trainer.policies.items()
        for k, v in p.model.state_dict().items()
    }
    losses = {tag: p.window_stats.clone() for tag, p in trainer.policies.items()}  # summed stats
    trainer.graceful_close()
    return weights, losses


def assert_same_training(eager, graphed):
    (weights_e, losses_e), (weights_g, losses_g) = eager, graphed
    for key, value in weights_e.items():
        torch.testing.assert_close(weights_g[key], value, **TOLERANCE, msg=key)
    for tag, value in losses_e.items():
        torch.testing.assert_close(losses_g[tag], value, **TOLERANCE, msg=tag)


def assert_replayed(trainer, trained_tags, iterations=ITERATIONS):
    # update 1 eager, update 2 captured and replayed, then replays
    assert trainer.update_graph.captures == {tag: 1 for tag in trained_tags}
    assert trainer.update_graph.replays == {tag: iterations - 1 for tag in trained_tags}


@needs_cuda
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_toy_update_graph_trains_like_the_eager_update(tmp_path, precision):
    eager = trained(toy_trainer(tmp_path / "eager", False, precision))
    graphed_trainer = toy_trainer(tmp_path / "graph", True, precision)
    graphed = trained(graphed_trainer)
    assert_replayed(graphed_trainer, ["a", "p"])
    assert_same_training(eager, graphed)


@needs_cuda
def test_toy_update_graph_with_the_compiled_loss(tmp_path):
    pytest.importorskip("triton")
    eager = trained(toy_trainer(tmp_path / "eager", False, compile_update=True))
    graphed_trainer = toy_trainer(tmp_path / "graph", True, compile_update=True)
    graphed = trained(graphed_trainer)
    assert_replayed(graphed_trainer, ["a", "p"])
    assert_same_training(eager, graphed)


@needs_cuda
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_covid_update_graph_trains_like_the_eager_update(tmp_path, precision):
    eager = trained(covid_trainer(tmp_path / "eager", False, precision))
    graphed_trainer = covid_trainer(tmp_path / "graph", True, precision)
    graphed = trained(graphed_trainer)
    trained_tags = [t for t, p in graphed_trainer.policies.items() if p.config["to_train"]]
    assert_replayed(graphed_trainer, trained_tags)
    assert_same_training(eager, graphed)


@needs_cuda
def test_a_replayed_iteration_never_synchronises(tmp_path):
    trainer = covid_trainer(tmp_path, True)
    for _ in range(2):  # the eager update, then the capture
        trainer.train_iteration()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        trainer.train_iteration()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert all(n == 2 for n in trainer.update_graph.replays.values())
    trainer.graceful_close()


@needs_cuda
def test_several_minibatches_update_eagerly_with_a_warning(tmp_path):
    trainer = toy_trainer(tmp_path, True, minibatches=2)
    with pytest.warns(RuntimeWarning, match="update_graphs: policy 'a' updates eagerly"):
        trained(trainer, iterations=2)
    assert trainer.update_graph.captures == {}
