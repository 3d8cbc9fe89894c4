"""The one-step economy's GPU environment on a GPU: pycuda and numba kernels match the numpy
reference at scale, and ``--device cuda`` training picks the GPU environment (env_backend auto).

Run on the GPU machine:
``python -m pytest -m gpu tests/foundation/scenarios/one_step_economy/test_one_step_gpu_env_gpu.py``.
"""

from __future__ import annotations

import json

import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.env_wrapper import EnvWrapper

pytestmark = pytest.mark.gpu
torch = require_gpu()

from test_one_step_gpu_env import COIN_EQ, FIXED, LINEAR, SAEZ, US_FEDERAL, config  # noqa: E402

BLOCKS = {
    "planner-isoelastic": config(),
    "us-federal-linear": config(tax=US_FEDERAL, **LINEAR),
    "fixed-coin-eq": config(tax=FIXED, **COIN_EQ),
    "period-3-of-6": config(episode_length=6, tax={"period": 3}),
}


@pytest.mark.parametrize("backend", GPU_BACKENDS)
@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_kernels_match_the_reference_on_the_device(backend, name):
    env = OneStepEconomyGpu(**BLOCKS[name])
    result = check_parity(env, backend, num_envs=1000, num_steps=12, seed=7)
    assert result.ok, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
@pytest.mark.parametrize(
    "tax", [SAEZ, {**SAEZ, "pareto_weight_type": "uniform"}], ids=["inverse", "uniform"]
)
def test_saez_kernels_match_the_reference_through_the_buffer_filling(backend, tax):
    """120 steps: 50 tax days of random rates fill the 500-sample buffers, then 10 periods
    of the Saez formula with the elasticity estimate."""
    env = OneStepEconomyGpu(**config(tax=tax))
    result = check_parity(env, backend, num_envs=256, num_steps=120, seed=3)
    assert result.ok, result.message
    w = EnvWrapper(env, num_envs=4, env_backend=backend)
    w.reset_all_envs()
    assert w.pull("saez_reached").tolist() == [0] * 4


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_masked_actions_are_counted_on_the_device(backend):
    env = OneStepEconomyGpu()
    w = EnvWrapper(env, num_envs=64, env_backend=backend)
    w.reset_all_envs()
    w.actions("a").fill_(40)  # labour is masked on the tax step
    w.step_all_envs()
    torch.cuda.synchronize()
    assert w.pull("invalid_actions").tolist() == [10] * 64
    with pytest.raises(ValueError, match="outside their masks on the device"):
        env.check_device_actions(w.pull)


def test_training_on_cuda_picks_the_gpu_environment(tmp_path):
    from ai_economist.training import training_script

    args = ["--env", "one_step_economy", "--device", "cuda", "--results_dir", str(tmp_path),
            "--quiet", "trainer.num_envs=1024", "trainer.train_batch_size=4096",
            "trainer.num_episodes=20480", "saving.tensorboard=false",
            "trainer.progress_bar=false", "saving.metrics_log_freq=1"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 10
    assert "env/endow/0/Coin" in rows[-1]  # only the GPU environment reports per-agent coin
    assert rows[-1]["env/social/productivity"] > 0


def test_more_envs_than_the_gpu_holds_fail_before_allocating():
    from ai_economist.warp_drive.errors import DeviceMemoryError

    free_before = torch.cuda.mem_get_info()[0]
    with pytest.raises(DeviceMemoryError, match=r"per env x 10000000 envs.*At most \d+ envs"):
        EnvWrapper(OneStepEconomyGpu(), num_envs=10**7, env_backend="pycuda")  # about 160 GB
    torch.cuda.empty_cache()
    assert torch.cuda.mem_get_info()[0] >= free_before - 2**28  # nothing big was allocated
