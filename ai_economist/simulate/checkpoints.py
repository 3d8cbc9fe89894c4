"""Policy models of a checkpoint of our trainer, for ``checkpoint:PATH`` policies."""

from __future__ import annotations

from typing import Any

from ai_economist.simulate.errors import SimulateError

COVID_ENV = "covid_and_economy_environment"


def load_models(path: str, policy_specs: dict) -> dict[str, Any]:
    """``{tag: model}`` (CPU, eval mode) of the newest checkpoint in ``path`` (a checkpoint file
    or a run folder); a checkpoint of another environment is a :class:`SimulateError`."""
    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint
    from ai_economist.warp_drive.training.models import load_policy_models

    state = load_checkpoint(find_checkpoint(path))
    config = state["config"]
    if config.get("name") != COVID_ENV:
        raise SimulateError(
            f"checkpoint {path!r} was trained on {config.get('name')!r}; "
            f"ai-economist-simulate runs {COVID_ENV!r} checkpoints"
        )
    return load_policy_models(state, policy_specs)
