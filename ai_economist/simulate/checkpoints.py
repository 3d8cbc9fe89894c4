"""Policy models of a checkpoint of our trainer, for ``checkpoint:PATH`` policies."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ai_economist.simulate.errors import SimulateError

COVID_ENV = "covid_and_economy_environment"


def load_state(path: str, env_name: str | tuple[str, ...] = COVID_ENV) -> dict[str, Any]:
    """The newest checkpoint in ``path`` (a checkpoint file or a run folder); one of another
    environment than ``env_name`` (one name or a tuple of them) is a :class:`SimulateError`."""
    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint

    state = load_checkpoint(find_checkpoint(path))
    config = state["config"]
    names = (env_name,) if isinstance(env_name, str) else tuple(env_name)
    if config.get("name") not in names:
        expected = " or ".join(repr(n) for n in names)
        raise SimulateError(
            f"checkpoint {path!r} was trained on {config.get('name')!r}; "
            f"ai-economist-simulate runs {expected} checkpoints here"
        )
    return state


def load_models(
    path: str,
    policy_specs: dict,
    env_name: str | tuple[str, ...] = COVID_ENV,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``{tag: model}`` (CPU, eval mode) of the newest checkpoint in ``path`` (a checkpoint file
    or a run folder; ``state``: that checkpoint, already loaded by :func:`load_state`); a
    checkpoint of another environment than ``env_name`` (one name or a tuple of them) is a
    :class:`SimulateError`."""
    from ai_economist.warp_drive.training.models import load_policy_models

    if state is None:
        state = load_state(path, env_name)
    missing = sorted(set(policy_specs) - set(state["policies"]))
    if missing:
        raise SimulateError(f"checkpoint {path!r} has no policies {missing}")
    return load_policy_models(state, policy_specs)


@contextmanager
def policy_inference() -> Iterator[None]:
    """Checkpoint models acting: no autograd, and one torch intra-op thread (restored after).

    The simulate commands' batches are small (a chunk's envs): with torch's default of one
    thread per core, several runs or ``--workers`` processes side by side spin their thread
    pools against each other, and a gather-trade-build step took 6x longer on a loaded 2-core
    machine (0.16 s against 0.026 s). Parallelism comes from ``--workers`` instead.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            yield
    finally:
        torch.set_num_threads(threads)


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
