"""Gather-trade-build's GPU economy through the one registry: ``auto`` picks ``pycuda`` on a
CUDA device and ``numpy`` on the CPU (unchanged), and under Numba's CUDA simulator the
``numba`` backend trains one tiny iteration of phase 2 on the CPU."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from ai_economist.foundation.scenarios.simple_wood_and_stone import (  # noqa: E402
    configs,
    registration,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (  # noqa: E402
    ArrayGatherTradeBuildBatch,
)
from ai_economist.training import training_script  # noqa: E402
from ai_economist.warp_drive.backend_names import EnvBackend  # noqa: E402
from ai_economist.warp_drive.errors import cudasim_enabled  # noqa: E402
from ai_economist.warp_drive.registry import ENVIRONMENTS  # noqa: E402


def run_config(phase_config, **trainer):
    env = configs.env_config(phase_config)
    env.update(episode_length=4, dense_log_frequency=None)
    return {"env": env, "trainer": {"num_envs": 2, "seed": 0, **trainer}}


@pytest.mark.parametrize("name, published", [("gather_trade_build_phase1", configs.PHASE1_ENV_CONFIG),
                                             ("gather_trade_build_phase2", configs.PHASE2_ENV_CONFIG)])  # fmt: skip
def test_auto_picks_pycuda_on_cuda_and_the_arrays_on_the_cpu(name, published):
    entry, run = ENVIRONMENTS[name], run_config(published)
    assert registration.backends(run) == (EnvBackend.PYCUDA, EnvBackend.NUMBA, EnvBackend.NUMPY,
                                          EnvBackend.CPU)  # fmt: skip
    assert entry.resolve_backend(run, "cuda") is EnvBackend.PYCUDA
    assert entry.resolve_backend(run, "cpu") is EnvBackend.NUMPY
    assert isinstance(entry.make(run, "cpu"), ArrayGatherTradeBuildBatch)


def test_a_config_the_kernels_do_not_cover_keeps_the_host_backends():
    run = run_config(configs.PHASE2_ENV_CONFIG)
    run["env"]["components"][1]["ContinuousDoubleAuction"]["max_num_orders"] = 80  # GPU: <= 64
    assert not registration.gpu_covers(run["env"])
    assert registration.backends(run) == (EnvBackend.NUMPY, EnvBackend.CPU)
    entry = ENVIRONMENTS["gather_trade_build_phase2"]
    assert entry.resolve_backend(run, "cuda") is EnvBackend.NUMPY  # auto: the arrays
    with pytest.raises(ValueError, match="max_num_orders=80"):
        registration.build(run, "cpu", EnvBackend.NUMBA)  # explicit: the setting is named


@pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")
def test_the_numba_backend_trains_one_tiny_iteration(tmp_path):
    tiny = ["trainer.num_envs=2", "trainer.train_batch_size=6", "trainer.num_episodes=2",
            "env.episode_length=3", "env.mobile_agent_observation_range=1",
            "env.dense_log_frequency=null", "saving.tensorboard=false",
            "trainer.progress_bar=false", "saving.metrics_log_freq=1",
            "policy.a.model.fc_dims=[8]", "policy.p.model.fc_dims=[8]",
            "trainer.env_backend=numba"]  # fmt: skip
    args = ["--env", "gather_trade_build_phase2", "--device", "cpu", "--quiet",
            "--results_dir", str(tmp_path)]  # fmt: skip
    assert training_script.main([*args, *tiny]) == 0
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1]
    assert np.isfinite(rows[-1]["a/loss"]) and np.isfinite(rows[-1]["p/loss"])


@pytest.mark.gpu
@pytest.mark.parametrize("phase", ["phase1", "phase2"])
def test_both_phases_train_on_the_gpu_economy(tmp_path, phase):
    import torch
    import yaml

    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    tiny = ["trainer.num_envs=64", "trainer.train_batch_size=640", "trainer.num_episodes=128",
            "env.episode_length=20", "env.dense_log_frequency=null", "saving.tensorboard=false",
            "trainer.progress_bar=false", "saving.metrics_log_freq=1",
            "policy.a.model.fc_dims=[32]", "policy.p.model.fc_dims=[32]"]  # fmt: skip
    args = ["--env", f"gather_trade_build_{phase}", "--device", "cuda", "--quiet",
            "--results_dir", str(tmp_path)]  # fmt: skip
    assert training_script.main([*args, *tiny]) == 0
    recorded = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert recorded["trainer"]["env_backend"] == "pycuda"  # auto on a CUDA device
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4]
    assert np.isfinite(rows[-1]["a/loss"]) and np.isfinite(rows[-1]["env/social/productivity"])
