"""The generic path on a GPU: pycuda and numba kernels match the numpy reference, the
trainer-facing tensors live on the device, and the example env trains with --device cuda.

Run on the GPU machine: ``python -m pytest -m gpu tests/warp_drive/test_generic_gpu.py``.
"""

from __future__ import annotations

import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.env_wrapper import EnvWrapper

pytestmark = pytest.mark.gpu
torch = require_gpu()


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_kernels_match_the_reference_on_the_device(backend):
    env = RingChase(num_chasers=4, num_runners=12, ring_size=32, episode_length=15)
    result = check_parity(env, backend, num_envs=64, num_steps=40, seed=5)
    assert result.ok, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_1024_agents_per_environment_match_the_reference(backend):
    env = RingChase(num_chasers=24, num_runners=1000, ring_size=4096, episode_length=6)
    result = check_parity(env, backend, num_envs=3, num_steps=8, seed=1)
    assert result.ok, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_tensors_live_on_the_device_and_are_the_kernels_memory(backend):
    w = EnvWrapper(RingChase(), num_envs=8, env_backend=backend)
    assert w.device.type == "cuda" and w.cuda_function_manager is not None
    for tag in w.policy_specs:
        for t in (w.observations(tag), w.action_masks(tag), w.actions(tag), w.rewards(tag)):
            assert t.is_cuda
    w.reset_all_envs()
    w.actions("chaser").fill_(4)  # +2 cells, written the way the trainer writes actions
    w.actions("runner").zero_()
    before = w.pull("positions")
    w.step_all_envs()
    torch.cuda.synchronize()
    assert ((w.pull("positions")[:, :2] - before[:, :2]) % 16 == 2).all()
    state = w.state_dict()
    other = EnvWrapper(RingChase(), num_envs=8, env_backend=backend, seed=3)
    other.load_state_dict(state)
    w.step_all_envs()
    other.step_all_envs()
    assert (w.pull("observations_runner") == other.pull("observations_runner")).all()


def test_ring_chase_trains_on_the_gpu(tmp_path):
    from ai_economist.training import training_script

    args = ["--env", "ring_chase", "--device", "cuda", "--results_dir", str(tmp_path), "--quiet",
            "trainer.num_envs=64", "trainer.train_batch_size=640", "trainer.num_episodes=192",
            "saving.tensorboard=false", "trainer.progress_bar=false", "saving.metrics_log_freq=1"]  # fmt: skip
    assert training_script.main(args) == 0
    assert (tmp_path / "metrics.jsonl").read_text().count("\n") == 6
