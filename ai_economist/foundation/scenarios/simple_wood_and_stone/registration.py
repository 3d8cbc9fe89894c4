"""Registers the gather-trade-build run configs as training environments
(``training_script --env gather_trade_build_phase1``): N envs on the host, as arrays
(:class:`~.array_batch.ArrayGatherTradeBuildBatch`, backend ``numpy``) or as dict-API envs
(:class:`~.batched.GatherTradeBuildBatch`, backend ``cpu``), or on the GPU
(:class:`~.gpu.economy_env.GatherTradeBuildEconomyGpu` behind ``EnvWrapper``, backends
``pycuda`` / ``numba``: every array on the device), see :func:`backends`. ``auto`` picks
``pycuda`` with ``--device cuda`` when the GPU economy covers the config, ``numpy`` on the CPU;
with a host backend and ``--device cuda`` the models train on the GPU and the observations,
masks, rewards and actions are copied between host and GPU each step. The GPU economy's
vectors and actions are the array batch's, so a policy trained on either acts on the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_economist.warp_drive.backend_names import (
    GPU_BACKENDS,
    EnvBackend,
    require,
    resolve_backend,
)
from ai_economist.warp_drive.registry import EnvEntry, register_env

PHASES = ("gather_trade_build_phase1", "gather_trade_build_phase2")


def _env_class() -> Any:
    from ai_economist.foundation.scenarios.simple_wood_and_stone.layout_from_file import (
        LayoutFromFile,
    )

    return LayoutFromFile


def backends(run_config: dict) -> tuple[EnvBackend, ...]:
    """``pycuda`` and ``numba`` (the GPU economy) when its kernels cover the config's ``env``
    block, ``numpy`` (the array economy) and ``cpu`` (dict envs) when the array economy
    covers it, else ``cpu`` only."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        economy_params,
    )

    try:
        economy_params(run_config["env"])
    except (ValueError, TypeError, KeyError):  # not covered, or a block the env rejects itself
        return (EnvBackend.CPU,)
    host = (EnvBackend.NUMPY, EnvBackend.CPU)
    return (*GPU_BACKENDS, *host) if gpu_covers(run_config["env"]) else host


def gpu_covers(env_block: dict) -> bool:
    """Whether the GPU economy's kernels cover an ``env`` block (its
    ``UnsupportedGpuConfig`` names what they do not)."""
    try:
        _economy_gpu(**env_block)
    except (ValueError, TypeError, KeyError):
        return False
    return True


def _economy_gpu(**env_block: Any) -> Any:
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.economy_env import (
        GatherTradeBuildEconomyGpu,
    )

    return GatherTradeBuildEconomyGpu(env_block)


def build(run_config: dict, device: Any, env_backend: EnvBackend | None = None) -> Any:
    """The batch of ``trainer.num_envs`` envs on the resolved ``env_backend``; its tensors
    live on ``device``, where the trainer keeps the models.

    ``"pycuda"`` / ``"numba"`` step every env on the GPU (an error naming the setting if the
    GPU economy does not cover the config), ``"numpy"`` all envs at once as host arrays (an
    error naming the setting if the array economy does not cover it), ``"cpu"`` one dict-API
    env after the other. All give the same observation and action layout. ``None``:
    ``trainer.env_backend`` resolved by the registry's one rule among :func:`backends`."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        ArrayGatherTradeBuildBatch,
    )
    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
        GatherTradeBuildBatch,
    )

    if env_backend is None:
        requested = run_config["trainer"].get("env_backend", "auto")
        env_backend = resolve_backend(requested, backends(run_config), device)
    backend = require(env_backend, (EnvBackend.CPU, EnvBackend.NUMPY, *GPU_BACKENDS),
                      "gather-trade-build")  # fmt: skip
    if backend.is_gpu:
        from ai_economist.warp_drive.registrar import build_gpu_env

        return build_gpu_env(_economy_gpu, run_config, device, backend)
    trainer = run_config["trainer"]
    args = (run_config["env"], trainer["num_envs"], int(trainer.get("seed", 0)))
    if backend is EnvBackend.CPU:
        return GatherTradeBuildBatch(*args, device=device)
    try:
        return ArrayGatherTradeBuildBatch(*args, device=device)
    except ValueError as err:
        raise ValueError(f"trainer.env_backend='numpy': {err}; use 'cpu'") from err


def _one_env(env_block: dict) -> Any:
    return _env_class()(**{k: v for k, v in env_block.items() if k != "seed"})


for _name in PHASES:
    register_env(
        _name,
        EnvEntry(
            build,
            "first",
            _env_class,
            _one_env,
            backends=backends,
            config_dir=Path(__file__).resolve().parent / "run_configs",
        ),
    )
