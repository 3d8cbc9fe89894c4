"""Registers the gather-trade-build run configs as training environments
(``training_script --env gather_trade_build_phase1``): N dict-API envs on the CPU
(:class:`~.batched.GatherTradeBuildBatch`)."""

from __future__ import annotations

from typing import Any

from ai_economist.training.environments import register_training_env

PHASES = ("gather_trade_build_phase1", "gather_trade_build_phase2")


def _env_class() -> Any:
    from ai_economist.foundation.scenarios.simple_wood_and_stone.layout_from_file import (
        LayoutFromFile,
    )

    return LayoutFromFile


def build(run_config: dict, device: Any, env_backend: str | None = None) -> Any:
    """The batch of ``trainer.num_envs`` envs (CPU only: the dict API has no GPU path yet)."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
        GatherTradeBuildBatch,
    )

    if str(device).startswith("cuda"):
        raise ValueError(
            "gather-trade-build trains on the CPU for now (--device cpu): its envs step "
            "through the dict API; a GPU array model is future work"
        )
    if env_backend not in (None, "auto", "cpu", "numpy"):
        raise ValueError(f"trainer.env_backend={env_backend!r}: gather-trade-build runs on 'cpu'")
    trainer = run_config["trainer"]
    return GatherTradeBuildBatch(
        run_config["env"], trainer["num_envs"], int(trainer.get("seed", 0))
    )


def _one_env(env_block: dict) -> Any:
    return _env_class()(**{k: v for k, v in env_block.items() if k != "seed"})


for _name in PHASES:
    register_training_env(_name, build, _env_class, "first", _one_env)
