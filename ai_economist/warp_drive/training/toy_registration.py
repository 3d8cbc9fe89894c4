"""Registers the toy target-matching environment (``training_script --env toy``); declared in
the ``ai_economist.environments`` entry points like every other environment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.registry import EnvEntry, register_env


def build_toy_env(run_config: dict, device: Any, env_backend: EnvBackend | None = None) -> Any:
    """The toy target-matching environment: torch tensors on ``device`` whatever the backend
    (it has the one backend ``numpy``, the host path); process ``i`` of a data-parallel run adds
    ``i`` to the seed."""
    from ai_economist.warp_drive.training.distributed import seed_offset
    from ai_economist.warp_drive.training.toy_env import ToyTargetEnv

    kwargs = dict(run_config["env"])
    kwargs["seed"] = kwargs.get("seed", 0) + seed_offset(device)
    return ToyTargetEnv(num_envs=run_config["trainer"]["num_envs"], device=device, **kwargs)


def _toy_env_class() -> Callable:
    from ai_economist.warp_drive.training.toy_env import ToyTargetEnv

    return ToyTargetEnv


def _one_toy_env(env_block: dict) -> Any:
    return _toy_env_class()(num_envs=1, device="cpu", **env_block)


register_env(
    "toy",
    EnvEntry(
        build_toy_env,
        "first",
        _toy_env_class,
        _one_toy_env,
        backends=(EnvBackend.NUMPY,),
        config_dir=Path(__file__).resolve().parent / "run_configs",
    ),
)
