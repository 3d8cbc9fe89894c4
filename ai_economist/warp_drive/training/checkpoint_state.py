"""What a checkpoint holds beyond the models, and whether a checkpoint fits a run.

The random streams (torch, CUDA, numpy, Python) are stored as weights_only-safe types.  The
environment's own state (mid-episode simulation arrays, time steps, done flags, observations,
random streams) is included when the env implements
:class:`~ai_economist.warp_drive.env_protocol.StatefulEnv` (:func:`capture_env_state`), so a
resume continues the interrupted episodes; otherwise, and for checkpoints written without it,
the envs restart from a reset, with a warning (:func:`restore_env_state`).
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import torch

from ai_economist.warp_drive.env_protocol import StatefulEnv
from ai_economist.warp_drive.env_state import EnvStateMismatch, to_checkpoint
from ai_economist.warp_drive.training.checkpoint import CheckpointError
from ai_economist.warp_drive.training.schema import MODEL_SCHEMA


def global_rng_states() -> dict[str, Any]:
    """The global torch, CUDA, numpy and Python random states (weights_only-safe types)."""
    np_state = np.random.get_state()
    states: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": {
            "keys": torch.from_numpy(np_state[1].astype(np.int64)),
            "pos": int(np_state[2]),
            "has_gauss": int(np_state[3]),
            "cached_gaussian": float(np_state[4]),
        },
        "python": _to_lists(random.getstate()),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_global_rng_states(states: dict[str, Any]) -> None:
    """Undo :func:`global_rng_states`."""
    torch.set_rng_state(states["torch"].cpu())
    np_state = states["numpy"]
    np.random.set_state(
        (
            "MT19937",
            np_state["keys"].numpy().astype(np.uint32),
            np_state["pos"],
            np_state["has_gauss"],
            np_state["cached_gaussian"],
        )
    )
    random.setstate(_to_tuples(states["python"]))
    if "cuda" in states and torch.cuda.is_available():
        cuda_states = [s.cpu() for s in states["cuda"]]
        if len(cuda_states) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda_states)


def _to_lists(value: Any) -> Any:
    return [_to_lists(v) for v in value] if isinstance(value, tuple | list) else value


def _to_tuples(value: Any) -> Any:
    return tuple(_to_tuples(v) for v in value) if isinstance(value, list) else value


def to_cpu(value: Any) -> Any:
    """A copy of nested dicts/lists/tuples with every tensor moved to the CPU."""
    if torch.is_tensor(value):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(to_cpu(v) for v in value)
    return value


def capture_env_state(env: Any) -> dict[str, Any] | None:
    """The env's state in checkpoint form (CPU tensors and plain values), or None with a
    warning when the env cannot provide one (a resume then restarts its episodes)."""
    if not isinstance(env, StatefulEnv):
        warnings.warn(
            f"{type(env).__name__} has no state_dict(): checkpoints do not include the env "
            f"state, and a resume restarts the envs from a reset",
            stacklevel=2,
        )
        return None
    try:
        state = env.state_dict()
    except NotImplementedError as err:
        warnings.warn(
            f"checkpoints do not include the env state ({err}); a resume restarts the envs "
            f"from a reset",
            stacklevel=2,
        )
        return None
    return to_checkpoint(state)


def restore_env_state(env: Any, state: dict[str, Any] | None) -> bool:
    """Load a saved env state; False (with a warning) when there is none or it does not fit,
    in which case the env keeps its fresh reset and the caller restarts its episode tracking."""
    if state is None:
        reason = "the checkpoint has no env state (older checkpoint, or an env without one)"
    elif not isinstance(env, StatefulEnv):
        reason = f"{type(env).__name__} has no load_state_dict()"
    else:
        try:
            env.load_state_dict(state)
            return True
        except (NotImplementedError, EnvStateMismatch) as err:
            reason = f"the saved env state cannot be loaded: {err}"
    warnings.warn(
        f"{reason}; the envs restart from a reset, so the resumed run is not bit for bit the "
        f"uninterrupted one",
        stacklevel=2,
    )
    return False


# ------------------------------------------------------------------ does it fit the run --
_MODEL_KEYS_IGNORED = ("model_ckpt_filepath",)  # initial weights: the checkpoint replaces them


def _model_default(key: str) -> Any:
    field = MODEL_SCHEMA.get(key)
    return getattr(field, "default", None)


def config_differences(saved: dict, config: dict) -> list[str]:
    """What differs between a checkpoint's run config and ``config`` in ways that make the
    checkpoint unusable: the environment, ``trainer.num_envs``, the policy tags or a model."""
    diffs = []
    if saved.get("name") != config.get("name"):
        diffs.append(
            f"'name' (the environment): checkpoint {saved.get('name')!r}, "
            f"run config {config.get('name')!r}"
        )
    old_envs = saved.get("trainer", {}).get("num_envs")
    if old_envs != config["trainer"]["num_envs"]:
        diffs.append(
            f"'trainer.num_envs': checkpoint {old_envs}, run config {config['trainer']['num_envs']}"
        )
    old_tags, tags = set(saved.get("policy", {})), set(config["policy"])
    if old_tags != tags:
        diffs.append(f"policy tags: checkpoint {sorted(old_tags)}, run config {sorted(tags)}")
    for tag in sorted(old_tags & tags):
        was, now = (
            saved["policy"][tag].get("normalize_value", False),
            config["policy"][tag].get("normalize_value", False),
        )
        if was != now:  # the value head's outputs mean other things
            diffs.append(f"'policy.{tag}.normalize_value': checkpoint {was!r}, run config {now!r}")
        old, new = saved["policy"][tag].get("model", {}), config["policy"][tag]["model"]
        for key in sorted(set(old) | set(new)):
            # a key the checkpoint's config predates had its default (e.g. conv_lstm's keys)
            was = old.get(key, _model_default(key))
            if key not in _MODEL_KEYS_IGNORED and was != new.get(key):
                diffs.append(
                    f"'policy.{tag}.model.{key}': checkpoint {was!r}, run config {new.get(key)!r}"
                )
    return diffs


def parameter_differences(saved: dict[str, dict], models: dict[str, torch.nn.Module]) -> list[str]:
    """Model parameters whose names or shapes differ (``saved``: ``{tag: state_dict}``)."""
    diffs = []
    for tag, model in models.items():
        old, new = saved.get(tag, {}), model.state_dict()
        for name in sorted(set(old) | set(new)):
            a = tuple(old[name].shape) if name in old else "absent"
            b = tuple(new[name].shape) if name in new else "absent"
            if a != b:
                diffs.append(f"policy '{tag}' parameter {name}: checkpoint {a}, this run {b}")
    return diffs


def env_differences(saved: dict, config: dict) -> list[str]:
    """The ``env`` keys whose values differ (context for a parameter-shape mismatch)."""
    old, new = saved.get("env", {}), config.get("env", {})
    return [
        f"'env.{key}': checkpoint {old.get(key)!r}, run config {new.get(key)!r}"
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]


def mismatch_message(checkpoint: Any, diffs: list[str]) -> str:
    """One message naming the checkpoint, every difference and what to do next."""
    return (
        f"checkpoint {checkpoint} does not fit this run:\n  - "
        + "\n  - ".join(diffs)
        + "\nresume with the checkpoint's own config (--resume RUN_DIR without --config), "
        "or start a new run"
    )


def check_checkpoint_fits(
    state: dict, config: dict, checkpoint: Any, models: dict[str, torch.nn.Module] | None = None
) -> None:
    """Raise :class:`~.checkpoint.CheckpointError` naming every difference when a loaded
    checkpoint does not fit the run config (and, given ``models``, the models' shapes)."""
    diffs = config_differences(state["config"], config)
    if models is not None and not diffs:
        shapes = parameter_differences(
            {t: p["model"] for t, p in state["policies"].items()}, models
        )
        diffs = shapes + (env_differences(state["config"], config) if shapes else [])
    if diffs:
        raise CheckpointError(mismatch_message(checkpoint, diffs))
