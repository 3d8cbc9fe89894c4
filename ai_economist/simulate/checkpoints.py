"""Policy models of a checkpoint of our trainer, for ``checkpoint:PATH`` policies."""

from __future__ import annotations

import copy
from typing import Any

from ai_economist.simulate.errors import SimulateError

COVID_ENV = "covid_and_economy_environment"


def load_models(path: str, policy_specs: dict) -> dict[str, Any]:
    """``{tag: model}`` (CPU, eval mode) of the newest checkpoint in ``path`` (a checkpoint file
    or a run folder); a checkpoint of another environment is a :class:`SimulateError`."""
    import torch

    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint
    from ai_economist.warp_drive.training.models import build_policy_model

    state = load_checkpoint(find_checkpoint(path))
    config = state["config"]
    if config.get("name") != COVID_ENV:
        raise SimulateError(
            f"checkpoint {path!r} was trained on {config.get('name')!r}; "
            f"ai-economist-simulate runs {COVID_ENV!r} checkpoints"
        )
    models = {}
    for tag, spec in policy_specs.items():
        policy_config = copy.deepcopy(config["policy"][tag])
        policy_config["model"]["model_ckpt_filepath"] = ""
        model = build_policy_model(tag, policy_config, spec, torch.device("cpu"))
        model.load_state_dict(state["policies"][tag]["model"])
        models[tag] = model.eval()
    return models
