"""On a GPU, grid-world Tag's CUDA C (pycuda) and Numba steps equal the numpy reference, bit for
bit, up to the paper's 1,000 agents per env (one block of 1,000 threads) and beyond (2,000
agents stepped by 1,024 threads), and it trains there.

Run on the GPU machine: ``python -m pytest -m gpu tests/example_envs/test_tag_gridworld_gpu.py``.
"""

from __future__ import annotations

import json

import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

from ai_economist.example_envs.tag_gridworld import TagGridWorld
from ai_economist.training import training_script
from ai_economist.warp_drive.checks.parity import check_parity

pytestmark = pytest.mark.gpu
torch = require_gpu()

CASES = [
    pytest.param(dict(num_taggers=3, grid_length=2, episode_length=5), 64, id="4-agents-full"),
    pytest.param(dict(num_taggers=3, grid_length=2, episode_length=5, use_full_observation=False),
                 64, id="4-agents-partial"),
    pytest.param(dict(num_taggers=199, grid_length=20, episode_length=8), 16, id="200-full"),
    pytest.param(dict(num_taggers=999, grid_length=30, episode_length=8,
                      use_full_observation=False), 32, id="1000-partial"),
    pytest.param(dict(num_taggers=1022, grid_length=40, episode_length=6,
                      use_full_observation=False), 4, id="1023-partial"),
    pytest.param(dict(num_taggers=1999, grid_length=40, episode_length=6,
                      use_full_observation=False), 4, id="2000-partial-1024-threads"),
    pytest.param(dict(num_taggers=99, grid_length=10, episode_length=6, threads_per_env=32),
                 8, id="100-full-32-threads"),
]  # fmt: skip


@pytest.mark.parametrize("backend", GPU_BACKENDS)
@pytest.mark.parametrize("kwargs, num_envs", CASES)
def test_kernels_match_the_reference_bit_for_bit(backend, kwargs, num_envs):
    env = TagGridWorld(seed=0, **kwargs)
    result = check_parity(env, backend, num_envs=num_envs, num_steps=12, seed=1, rtol=0, atol=0)
    assert result.ok, result.message


def test_trains_on_the_gpu(tmp_path):
    run_dir = tmp_path / "run"
    args = ["--env", "tag_gridworld", "--device", "cuda", "--results_dir", str(run_dir), "--quiet",
            "trainer.num_envs=100", "trainer.train_batch_size=10000", "trainer.num_episodes=300",
            "saving.tensorboard=false", "saving.metrics_log_freq=1"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(0.0 <= r["env/tag rate"] <= 1.0 for r in rows)
