"""The whole rollout as one CUDA graph (policy + env step + reset), the whole iteration as one
CUDA graph (``trainer.cuda_graph_update``: rollout, GAE and update), and bf16 autocast, on a GPU.

Run on a GPU machine with ``pytest -m gpu``.  The graphs replay exactly the kernels the eager
loop launches (the iteration graph reads the schedules' values and the minibatch orders from
device tensors), so training with them must give the same models as training without them.
"""

from __future__ import annotations

import pytest
import torch

from ai_economist.training.config import default_config_path, load_run_config
from ai_economist.training.training_script import build_trainer as build_registered
from ai_economist.warp_drive.training.checkpoint import load_checkpoint

pytestmark = pytest.mark.gpu

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

SETTINGS = {  # env name -> (steps per rollout, env overrides)
    "covid_and_economy_environment": (45, []),
    "tag_continuous": (25, ["env.num_runners=20", "env.episode_length=50"]),
}


def build_trainer(
    tmp_path, env_name, backend, graphs, precision="fp32", num_envs=4, extra=(), update_graph=False
):
    """A small trainer; ``graphs``: the rollout graph, ``update_graph``: the whole iteration
    as one graph (``trainer.cuda_graph_update``; off here unless asked for)."""
    steps, env_overrides = SETTINGS[env_name]
    overrides = [
        f"trainer.num_envs={num_envs}",
        f"trainer.train_batch_size={num_envs * steps}",
        "trainer.num_episodes=100",
        "trainer.device=cuda",
        f"trainer.env_backend={backend}",
        f"trainer.cuda_graphs={str(graphs).lower()}",
        f"trainer.cuda_graph_update={str(update_graph).lower()}",
        f"trainer.precision={precision}",
        "trainer.progress_bar=false",
        "saving.tensorboard=false",
        *env_overrides,
        *extra,
    ]
    config = load_run_config(default_config_path(env_name), overrides)
    return build_registered(config, torch.device("cuda"), results_directory=tmp_path, verbose=False)


def snapshot(trainer):
    """The trainer's weights and last rewards, per policy (copies)."""
    torch.cuda.synchronize()
    params = {
        f"{tag}/{k}": v.detach().clone()
        for tag, p in trainer.policies.items()
        for k, v in p.model.state_dict().items()
    }
    rewards = {tag: p.buffer.rewards.clone() for tag, p in trainer.policies.items()}
    return params, rewards


def trained_state(trainer, iterations=3):
    for _ in range(iterations):
        trainer.train_iteration()
    state = snapshot(trainer)
    trainer.graceful_close()
    return state


@needs_cuda
@pytest.mark.parametrize("backend", ["pycuda", "numba"])
@pytest.mark.parametrize("env_name", list(SETTINGS))
def test_whole_rollout_graph_trains_like_the_eager_loop(tmp_path, env_name, backend):
    eager = build_trainer(tmp_path / "eager", env_name, backend, graphs=False)
    graphed = build_trainer(tmp_path / "graph", env_name, backend, graphs=True)
    params_e, rewards_e = trained_state(eager)
    params_g, rewards_g = trained_state(graphed)
    assert graphed.rollout.graph_mode == "rollout"
    for tag, value in rewards_e.items():  # the env stepped identically (3 rollouts, resets)
        assert torch.allclose(value, rewards_g[tag], atol=1e-5), tag
    for key, value in params_e.items():
        assert torch.allclose(value, params_g[key], atol=1e-5), key


@needs_cuda
def test_popart_value_heads_rescaled_between_rollouts_reach_the_replayed_graph(tmp_path):
    norm = ["policy.a.normalize_value=true", "policy.p.normalize_value=true"]
    name = "covid_and_economy_environment"
    eager = build_trainer(tmp_path / "eager", name, "pycuda", graphs=False, extra=norm)
    graphed = build_trainer(tmp_path / "graph", name, "pycuda", graphs=True, extra=norm)
    params_e, rewards_e = trained_state(eager)
    params_g, rewards_g = trained_state(graphed)
    assert graphed.rollout.graph_mode == "rollout"
    assert all(float(p.value_norm.moments[2]) > 0 for p in graphed.policies.values())
    for tag, value in rewards_e.items():
        assert torch.allclose(value, rewards_g[tag], atol=1e-5), tag
    for key, value in params_e.items():
        assert torch.allclose(value, params_g[key], atol=1e-5), key


@needs_cuda
def test_whole_rollout_graph_iteration_never_synchronises(tmp_path):
    trainer = build_trainer(tmp_path, "covid_and_economy_environment", "pycuda", graphs=True)
    trainer.train_iteration()  # captures the graph
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        trainer.train_iteration()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert trainer.rollout.graph_mode == "rollout"
    trainer.graceful_close()


@needs_cuda
def test_host_step_counter_follows_the_replayed_graph(tmp_path):
    trainer = build_trainer(tmp_path, "covid_and_economy_environment", "pycuda", graphs=True)
    for _ in range(13):  # 13 x 45 steps = 585 = one 540-day episode and 45 days
        trainer.train_iteration()
    assert trainer.env._steps_in_episode == 45
    trainer.env.step_all_envs()  # eager stepping still works after replays
    trainer.graceful_close()


@needs_cuda
def test_bf16_training_stays_close_to_fp32_and_finite(tmp_path):
    fp32, _ = trained_state(build_trainer(tmp_path / "fp32", "covid_and_economy_environment",
                                          "pycuda", graphs=True))  # fmt: skip
    bf16_trainer = build_trainer(tmp_path / "bf16", "covid_and_economy_environment", "pycuda",
                                 graphs=True, precision="bf16")  # fmt: skip
    bf16, _ = trained_state(bf16_trainer)
    for key, value in fp32.items():
        assert torch.isfinite(bf16[key]).all(), key
        # three small Adam steps from the same initial weights: bf16 moves them alike
        assert torch.allclose(value, bf16[key], atol=5e-3), key


@needs_cuda
@pytest.mark.parametrize("graphs", [False, True])
def test_policies_on_their_own_streams_train_like_one_stream(tmp_path, graphs):
    from ai_economist.warp_drive.training.rollout import PolicyStreams

    env_name = "covid_and_economy_environment"
    serial = build_trainer(tmp_path / "serial", env_name, "pycuda", graphs=graphs)
    tags = list(serial.policies)
    serial.rollout.streams = PolicyStreams(serial.device, tags, enabled=False)
    serial.update_streams = PolicyStreams(serial.device, tags, enabled=False)
    side_by_side = build_trainer(tmp_path / "streams", env_name, "pycuda", graphs=graphs)
    assert side_by_side.rollout.streams.enabled and side_by_side.update_streams.enabled
    params_s, rewards_s = trained_state(serial)
    params_p, rewards_p = trained_state(side_by_side)
    for tag, value in rewards_s.items():
        assert torch.allclose(value, rewards_p[tag], atol=1e-5), tag
    for key, value in params_s.items():
        assert torch.allclose(value, params_p[key], atol=1e-5), key


@needs_cuda
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_compiled_update_trains_like_the_eager_update(tmp_path, precision):
    env_name = "covid_and_economy_environment"
    eager = build_trainer(tmp_path / "eager", env_name, "pycuda", True, precision)
    compiled = build_trainer(tmp_path / "compiled", env_name, "pycuda", True, precision)
    compiled.config["trainer"]["compile_update"] = True
    params_e, rewards_e = trained_state(eager)
    params_c, rewards_c = trained_state(compiled)
    atol = 1e-4 if precision == "fp32" else 2e-3  # fused reductions sum in another order
    for key, value in params_e.items():
        assert torch.allclose(value, params_c[key], atol=atol), key


@needs_cuda
@pytest.mark.usefixtures("full_float32_matmuls")
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_fused_acting_layers_match_the_plain_layers(precision):
    from ai_economist.warp_drive.training.models import FullyConnectedActorCritic, autocast

    torch.manual_seed(0)
    model = FullyConnectedActorCritic(64, 11, [256, 256]).cuda()
    obs = torch.randn(60, 51, 64, device="cuda")
    device = torch.device("cuda")
    with autocast(device, precision):
        plain_logits, plain_values = model(obs)  # with autograd: nn.Linear + nn.ReLU
        with torch.no_grad():
            fused_logits, fused_values = model(obs)  # the ReLU in the GEMM epilogue
            with model.frozen_weights():  # weights prepared once (cast under bf16)
                frozen_logits, frozen_values = model(obs)
    atol = 1e-4 if precision == "fp32" else 3e-2
    assert fused_logits.dtype == torch.float32  # the heads stay float32
    assert torch.allclose(plain_logits, fused_logits, atol=atol)
    assert torch.allclose(plain_values, fused_values, atol=atol)
    assert torch.equal(fused_logits, frozen_logits) and torch.equal(fused_values, frozen_values)


# ------------------------------------------------ the whole iteration as one graph --
COVID = "covid_and_economy_environment"
ITERATIONS = 6  # two eager, the capture (replayed at once), three more replays

CASES = {
    "covid": (COVID, []),
    "tag": ("tag_continuous", []),
    # three minibatches of two epochs (permutations drawn before each replay) and a
    # learning rate that changes at every iteration (read from a tensor by Adam)
    "covid-minibatches-lr-schedule": (
        COVID,
        [
            "policy.a.num_mini_batches=3",
            "policy.a.num_epochs=2",
            "policy.p.num_epochs=2",
            "policy.a.lr=[[0,0.001],[2000,0.0001]]",
            "policy.p.gamma=[[0,0.9],[2000,0.99]]",
        ],
    ),
    "covid-popart": (COVID, ["policy.a.normalize_value=true", "policy.p.normalize_value=true"]),
}


def run(trainer, iterations=ITERATIONS):
    """Weights, last rewards and the window's update statistics after ``iterations`` more."""
    for _ in range(iterations):
        trainer.train_iteration()
    params, rewards = snapshot(trainer)
    stats = {tag: p.window_stats.clone() for tag, p in trainer.policies.items()}
    return params, rewards, stats


def assert_same_training(reference, graphed):
    for part_r, part_g in zip(reference, graphed, strict=True):
        for key, value in part_r.items():
            torch.testing.assert_close(part_g[key], value, atol=1e-5, rtol=1e-5, msg=key)


@needs_cuda
@pytest.mark.parametrize("case", list(CASES))
def test_the_iteration_graph_trains_like_the_eager_loop(tmp_path, case):
    env_name, extra = CASES[case]
    eager = build_trainer(tmp_path / "eager", env_name, "pycuda", graphs=False, extra=extra)
    graphed = build_trainer(
        tmp_path / "graph", env_name, "pycuda", graphs=True, extra=extra, update_graph=True
    )
    assert graphed.iteration_graph is not None
    reference = run(eager)
    result = run(graphed)
    assert graphed.iteration_graph.graph is not None  # captured and replayed, no fallback
    assert graphed.rollout.graph_mode == "off"  # no second graph beside it
    assert_same_training(reference, result)
    if "lr-schedule" in case:  # the schedules moved, and the graph read their new values
        a = graphed.policies["a"]
        assert float(graphed.iteration_graph.inputs["a"].lr) == pytest.approx(a.hyper["lr"])
        assert a.hyper["lr"] < 0.001
    eager.graceful_close()
    graphed.graceful_close()


@needs_cuda
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_iteration_graph_replays_the_compiled_update(tmp_path, precision):
    compiled = ["trainer.compile_update=true", "trainer.acting_precision=fp32"]
    rollout_only = build_trainer(
        tmp_path / "rollout", COVID, "pycuda", True, precision, extra=compiled
    )
    graphed = build_trainer(
        tmp_path / "graph", COVID, "pycuda", True, precision, extra=compiled, update_graph=True
    )
    reference = run(rollout_only)
    result = run(graphed)
    assert graphed.iteration_graph.graph is not None
    assert_same_training(reference, result)


@needs_cuda
def test_an_iteration_replayed_from_the_graph_never_synchronises(tmp_path):
    trainer = build_trainer(tmp_path, COVID, "pycuda", graphs=True, update_graph=True)
    for _ in range(3):  # two eager iterations, then the capture
        trainer.train_iteration()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        trainer.train_iteration()
        trainer.train_iteration()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert trainer.iteration_graph.graph is not None
    trainer.graceful_close()


@needs_cuda
def test_host_step_counter_and_metrics_follow_the_replayed_iterations(tmp_path):
    trainer = build_trainer(tmp_path, COVID, "pycuda", graphs=True, update_graph=True)
    for _ in range(13):  # 13 x 45 steps = 585 = one 540-day episode and 45 days
        trainer.train_iteration()
    assert trainer.env._steps_in_episode == 45
    trainer._log_metrics()  # the episode that ended inside a replay is counted
    assert trainer.last_metrics["a/episode_reward"] != 0.0
    trainer.env.step_all_envs()  # eager stepping still works after replays
    trainer.graceful_close()


@needs_cuda
def test_a_checkpoint_of_a_graphed_run_resumes_without_graphs(tmp_path):
    graphed = build_trainer(tmp_path / "graph", COVID, "pycuda", graphs=True, update_graph=True)
    for _ in range(4):
        graphed.train_iteration()
    path = graphed.save_checkpoint()
    state = load_checkpoint(path)
    group = state["policies"]["a"]["optimizer"]["param_groups"][0]
    assert isinstance(group["lr"], float) and group["capturable"] is False
    resumed = build_trainer(tmp_path / "resumed", COVID, "pycuda", graphs=False)
    resumed._restore(state, path)
    resumed.train_iteration()  # an eager Adam step with the restored state
    torch.cuda.synchronize()
    graphed.graceful_close()
    resumed.graceful_close()


@needs_cuda
def test_a_failed_capture_warns_and_trains_on_with_the_rollout_graph(tmp_path, monkeypatch):
    reference = build_trainer(tmp_path / "rollout", COVID, "pycuda", graphs=True)
    graphed = build_trainer(tmp_path / "graph", COVID, "pycuda", graphs=True, update_graph=True)
    capturing = graphed.iteration_graph
    record_episodes = graphed.record_episodes

    def refuse_capture():  # like an op that a CUDA graph cannot record; fine when eager
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("an op that cannot be captured")
        record_episodes()

    for _ in range(2):  # the eager warm-up
        graphed.train_iteration()
    monkeypatch.setattr(graphed, "record_episodes", refuse_capture)
    with pytest.warns(RuntimeWarning, match="cuda_graph_update.*an op that cannot be captured"):
        graphed.train_iteration()  # the capture fails: this iteration runs without it
    monkeypatch.undo()
    assert not capturing.enabled and capturing.graph is None
    assert graphed.rollout.graph_mode == "rollout"  # the rollout graph took over
    assert_same_training(run(reference), run(graphed, ITERATIONS - 3))


@needs_cuda
def test_optimizers_stepped_by_another_framework_turn_the_iteration_graph_off(tmp_path):
    def steps_elsewhere(trainer):
        optimizers = {tag: p.optimizer for tag, p in trainer.policies.items()}
        for _ in range(4):
            trainer.train_iteration(optimizers, lambda loss: loss.backward())
        return run(trainer, 0)

    reference = build_trainer(tmp_path / "rollout", COVID, "pycuda", graphs=True)
    graphed = build_trainer(tmp_path / "graph", COVID, "pycuda", graphs=True, update_graph=True)
    expected, result = steps_elsewhere(reference), steps_elsewhere(graphed)
    assert graphed.iteration_graph is None and graphed.rollout.graph_mode == "rollout"
    assert_same_training(expected, result)
