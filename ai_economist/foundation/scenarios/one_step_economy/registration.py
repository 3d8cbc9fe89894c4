"""Registers the one-step economy for training (``training_script --env one_step_economy``):
the batched numpy array model behind ``BatchedPolicyEnv`` on the CPU, the GPU environment
(``gpu_env.OneStepEconomyGpu``, generic path) with ``env_backend`` pycuda / numba, or auto on
a CUDA device; and the GPU environment with the kernel registry (for the parity command)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.registry import EnvEntry, register_env


def build_one_step_economy(
    run_config: dict, device: Any, env_backend: EnvBackend = EnvBackend.NUMPY
) -> Any:
    """The one-step economy: the batched numpy array model behind ``BatchedPolicyEnv``
    (tensors on ``device``; process ``i`` of a data-parallel run adds ``i`` to ``env.seed``) for ``numpy``, or the GPU
    environment (``gpu_env.OneStepEconomyGpu``, CUDA C or Numba) for ``pycuda`` / ``numba``,
    which ``auto`` picks on a CUDA device (a config its kernels do not cover is an error, not a
    silent fallback to the CPU)."""
    from ai_economist.foundation.scenarios.one_step_economy.batched_env import (
        OneStepEconomyBatchedEnv,
    )
    from ai_economist.warp_drive.training.distributed import seed_offset

    if env_backend.is_gpu:
        from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
        from ai_economist.warp_drive.registrar import build_gpu_env

        return build_gpu_env(OneStepEconomyGpu, run_config, device, env_backend)
    env_block = dict(run_config["env"])
    env_block["seed"] = env_block.get("seed", 0) + seed_offset(device)
    return OneStepEconomyBatchedEnv(
        num_envs=run_config["trainer"]["num_envs"], device=device, **env_block
    )


def _one_step_class() -> Callable:
    from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import OneStepEconomy

    return OneStepEconomy


def _one_one_step(env_block: dict) -> Any:
    from ai_economist.foundation.scenarios.one_step_economy.batched_env import (
        OneStepEconomyBatchedEnv,
    )

    return OneStepEconomyBatchedEnv(num_envs=1, device="cpu", **env_block)


register_env(
    "one_step_economy",
    EnvEntry(
        build_one_step_economy,
        "first",
        _one_step_class,
        _one_one_step,
        backends=(EnvBackend.PYCUDA, EnvBackend.NUMBA, EnvBackend.NUMPY),
        config_dir=Path(__file__).resolve().parent / "run_configs",
    ),
)


def _register_gpu_env() -> None:
    from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
    from ai_economist.warp_drive.registrar import register_gpu_environment

    register_gpu_environment(OneStepEconomyGpu, training=False)


_register_gpu_env()
