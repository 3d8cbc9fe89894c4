"""Registers the gather-trade-build run configs as training environments
(``training_script --env gather_trade_build_phase1``): N envs on the CPU, as arrays
(:class:`~.array_batch.ArrayGatherTradeBuildBatch`) or as dict-API envs
(:class:`~.batched.GatherTradeBuildBatch`), see :func:`build`; with ``--device cuda`` the
models train on the GPU and the observations, masks, rewards and actions are copied between
host and GPU each step."""

from __future__ import annotations

from typing import Any

from ai_economist.training.environments import register_training_env

PHASES = ("gather_trade_build_phase1", "gather_trade_build_phase2")
# "auto" steps the envs as arrays from this many envs on (below, one dict env after the other
# is faster: benchmarks/gtb_array_step.py --economy --batches).
AUTO_ARRAY_MIN_ENVS = 5


def _env_class() -> Any:
    from ai_economist.foundation.scenarios.simple_wood_and_stone.layout_from_file import (
        LayoutFromFile,
    )

    return LayoutFromFile


def build(run_config: dict, device: Any, env_backend: str | None = None) -> Any:
    """The batch of ``trainer.num_envs`` envs, stepped on the host (no GPU env backend yet);
    its tensors live on ``device``, where the trainer keeps the models.

    ``trainer.env_backend``: ``"numpy"`` steps all envs at once as arrays
    (:class:`~.array_batch.ArrayGatherTradeBuildBatch`; an error if the array economy does
    not cover the config), ``"cpu"`` one dict-API env after the other
    (:class:`~.batched.GatherTradeBuildBatch`), ``"auto"`` the arrays when they cover the
    config and there are at least :data:`AUTO_ARRAY_MIN_ENVS` envs on the CPU, else the dict
    envs (with a GPU ``device``, ``"auto"`` keeps the dict envs, the path whose host-GPU copies
    have run on a GPU; ``"numpy"`` selects the arrays there). Both give the same observations,
    masks and rewards."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        ArrayGatherTradeBuildBatch,
    )
    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
        GatherTradeBuildBatch,
    )

    trainer = run_config["trainer"]
    backend = env_backend or trainer.get("env_backend", "auto")
    if backend not in ("auto", "cpu", "numpy"):
        raise ValueError(
            f"trainer.env_backend={backend!r}: gather-trade-build steps its envs on the host "
            "('auto', 'cpu' or 'numpy'); --device cuda still puts the models on the GPU"
        )
    args = (run_config["env"], trainer["num_envs"], int(trainer.get("seed", 0)))
    on_gpu = str(device).startswith("cuda")
    if backend == "cpu" or (backend == "auto" and (on_gpu or args[1] < AUTO_ARRAY_MIN_ENVS)):
        return GatherTradeBuildBatch(*args, device=device)
    try:
        return ArrayGatherTradeBuildBatch(*args, device=device)
    except ValueError as err:
        if backend == "numpy":
            raise ValueError(f"trainer.env_backend='numpy': {err}; use 'cpu'") from err
        return GatherTradeBuildBatch(*args, device=device)


def _one_env(env_block: dict) -> Any:
    return _env_class()(**{k: v for k, v in env_block.items() if k != "seed"})


for _name in PHASES:
    register_training_env(_name, build, _env_class, "first", _one_env)
