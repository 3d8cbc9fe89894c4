"""Registers the one-step economy for training (``training_script --env one_step_economy``):
the batched numpy array model behind ``BatchedPolicyEnv``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ai_economist.training.environments import register_training_env


def build_one_step_economy(run_config: dict, device: Any, env_backend: str | None = None) -> Any:
    """The one-step economy: the batched numpy array model behind ``BatchedPolicyEnv``
    (tensors on ``device``; process ``i`` of a data-parallel run adds ``i`` to ``env.seed``)."""
    from ai_economist.foundation.scenarios.one_step_economy.batched_env import (
        OneStepEconomyBatchedEnv,
    )
    from ai_economist.warp_drive.training.distributed import seed_offset

    backend = env_backend or run_config["trainer"].get("env_backend", "auto")
    if backend not in ("auto", "numpy", "cpu"):
        raise ValueError(
            f"trainer.env_backend={backend!r}: the one-step economy runs on the batched numpy "
            "model; use 'auto', 'numpy' or 'cpu'"
        )
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


register_training_env(
    "one_step_economy", build_one_step_economy, _one_step_class, "first", _one_one_step
)
