"""GPU-resident multi-agent RL training (PPO / A2C) for ``BatchedPolicyEnv`` environments.

``Trainer`` is importable from here; it needs torch (the ``train`` extra).  The same training
as a PyTorch Lightning module: ``lightning.WarpDriveModule`` (the ``lightning`` extra).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Trainer", "TrainingDiverged", "ConfigError", "validate_config"]


def __getattr__(name: str) -> Any:  # lazy: importing the package does not import torch
    if name in ("Trainer", "TrainingDiverged"):
        from ai_economist.warp_drive.training import trainer

        return getattr(trainer, name)
    if name in ("ConfigError", "validate_config"):
        from ai_economist.warp_drive.training import schema

        return getattr(schema, name)
    raise AttributeError(name)
