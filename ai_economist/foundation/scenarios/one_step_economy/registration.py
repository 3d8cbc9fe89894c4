"""Registers the one-step economy for training (``training_script --env one_step_economy``):
the batched numpy array model behind ``BatchedPolicyEnv`` on the CPU, the GPU environment
(``gpu_env.OneStepEconomyGpu``, generic path) with ``env_backend`` pycuda / numba, or auto on
a CUDA device; and the GPU environment with the kernel registry (for the parity command)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ai_economist.training.environments import register_training_env


def build_one_step_economy(run_config: dict, device: Any, env_backend: str | None = None) -> Any:
    """The one-step economy: the batched numpy array model behind ``BatchedPolicyEnv``
    (tensors on ``device``; GPU ``i`` adds ``i`` to ``env.seed``), or the GPU environment
    for ``env_backend`` pycuda / numba, and auto on a CUDA device."""
    import torch

    from ai_economist.foundation.scenarios.one_step_economy.batched_env import (
        OneStepEconomyBatchedEnv,
    )

    backend = env_backend or run_config["trainer"].get("env_backend", "auto")
    on_gpu = torch.device(device).type == "cuda"
    if backend in ("pycuda", "numba") or (backend == "auto" and on_gpu):
        from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
        from ai_economist.training.environments import build_gpu_env

        return build_gpu_env(OneStepEconomyGpu, run_config, device, backend)
    if backend not in ("auto", "numpy", "cpu"):
        raise ValueError(
            f"trainer.env_backend={backend!r}: the one-step economy runs on the batched numpy "
            "model ('auto' on the CPU, 'numpy', 'cpu') or on the GPU ('pycuda', 'numba')"
        )
    env_block = dict(run_config["env"])
    env_block["seed"] = env_block.get("seed", 0) + (torch.device(device).index or 0)
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


register_training_env(
    "one_step_economy", build_one_step_economy, _one_step_class, "first", _one_one_step
)


def _register_gpu_env() -> None:
    from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
    from ai_economist.warp_drive.registrar import register_gpu_environment

    register_gpu_environment(OneStepEconomyGpu, training=False)


_register_gpu_env()
