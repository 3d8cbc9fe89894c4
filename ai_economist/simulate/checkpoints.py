"""Policy models of a checkpoint of our trainer, for ``checkpoint:PATH`` policies."""

from __future__ import annotations

from typing import Any

from ai_economist.simulate.errors import SimulateError

COVID_ENV = "covid_and_economy_environment"


def load_models(
    path: str, policy_specs: dict, env_name: str | tuple[str, ...] = COVID_ENV
) -> dict[str, Any]:
    """``{tag: model}`` (CPU, eval mode) of the newest checkpoint in ``path`` (a checkpoint file
    or a run folder); a checkpoint of another environment than ``env_name`` (one name or a
    tuple of them) is a :class:`SimulateError`."""
    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint
    from ai_economist.warp_drive.training.models import load_policy_models

    state = load_checkpoint(find_checkpoint(path))
    config = state["config"]
    names = (env_name,) if isinstance(env_name, str) else tuple(env_name)
    if config.get("name") not in names:
        expected = " or ".join(repr(n) for n in names)
        raise SimulateError(
            f"checkpoint {path!r} was trained on {config.get('name')!r}; "
            f"ai-economist-simulate runs {expected} checkpoints here"
        )
    missing = sorted(set(policy_specs) - set(state["policies"]))
    if missing:
        raise SimulateError(f"checkpoint {path!r} has no policies {missing}")
    return load_policy_models(state, policy_specs)


def policy_actions(model: Any, obs: Any, mask: Any, generators: list | None) -> Any:
    """A model's actions (torch): the most likely allowed one (``generators`` None), or a
    draw with Gumbel noise from each env's own generator (one per env, first axis)."""
    import torch

    from ai_economist.warp_drive.training.models import greedy_masked, sample_masked

    logits, _ = model(obs.float())
    if generators is None:
        return greedy_masked(logits, mask)
    shape = logits.shape[1:]
    noise = torch.stack([-torch.empty(shape).exponential_(generator=g).log() for g in generators])
    return sample_masked(logits, mask, gumbel=noise)[0]
