"""Checkpoint form of the gather-trade-build array economy's state (exact resume).

:func:`capture` flattens an :class:`~.array_economy.EconomyState` (nested dataclasses and dicts
of numpy arrays, and each env's ``numpy.random.Generator``) into ``{"world/timestep": array,
..., "world/rngs": [state, ...]}``; :func:`restore` writes such a dict back into a live state
of the same shapes, in place, so that every reference to the arrays and generators (the tax's
Saez trackers share the world's generators) stays valid.  The generators' states are stored
as JSON text: their 128-bit integers are not plain checkpoint types.

Lists of objects with ``state_dict`` / ``load_state_dict`` (the Saez tax model's per-env
trackers, whose income buffers persist across episodes) are saved through those methods.  Any
other kind of field makes :func:`capture` raise ``NotImplementedError``; the trainer then falls
back to restarting the envs from a reset, with a warning.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

from ai_economist.warp_drive.env_state import EnvStateMismatch, as_numpy, check_keys


def _is_generators(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(g, np.random.Generator) for g in value)


def _is_stateful_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(hasattr(v, "state_dict") and hasattr(v, "load_state_dict") for v in value)
    )


def _children(value: Any) -> dict[str, Any] | None:
    """The named parts of a dataclass or dict, or None for a leaf."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return dict(value)
    return None


def capture(state: Any, prefix: str = "") -> dict[str, Any]:
    """Every array (copied) and generator state of ``state``, keyed by its path."""
    out: dict[str, Any] = {}
    for name, value in (_children(state) or {}).items():
        key = f"{prefix}{name}"
        if isinstance(value, np.ndarray):
            out[key] = value.copy()
        elif _is_generators(value) and value:
            out[key] = [json.dumps(g.bit_generator.state) for g in value]
        elif _is_stateful_list(value):  # e.g. the Saez tax model's per-env trackers
            out[key] = [v.state_dict() for v in value]
        elif value is None:
            continue
        elif _children(value) is not None:
            out.update(capture(value, f"{key}/"))
        else:
            raise NotImplementedError(
                f"the array economy's state field {key!r} ({type(value).__name__}) cannot be saved"
            )
    return out


def _targets(state: Any, prefix: str = "") -> dict[str, Any]:
    """The live arrays and generator lists of ``state``, keyed as :func:`capture` keys them."""
    out: dict[str, Any] = {}
    for name, value in (_children(state) or {}).items():
        key = f"{prefix}{name}"
        if isinstance(value, np.ndarray) or (_is_generators(value) and value):
            out[key] = value
        elif _is_stateful_list(value):
            out[key] = value
        elif value is not None and _children(value) is not None:
            out.update(_targets(value, f"{key}/"))
    return out


def restore(state: Any, saved: dict[str, Any]) -> None:
    """Write :func:`capture`'s output back into ``state`` (checked first: a mismatch changes
    nothing).

    Raises:
        EnvStateMismatch: naming the first key that is missing, extra or of another shape.
    """
    live = _targets(state)
    check_keys("gather-trade-build array state", saved, live)
    checked: dict[str, Any] = {}
    for key, target in live.items():
        if isinstance(target, np.ndarray):
            value = as_numpy(saved[key])
            if value.shape != target.shape:
                raise EnvStateMismatch(
                    f"env state {key!r} has shape {value.shape}; this environment needs "
                    f"{target.shape} (saved with other num_envs or scenario settings?)"
                )
            checked[key] = value
        else:
            if len(saved[key]) != len(target):
                raise EnvStateMismatch(
                    f"env state {key!r} holds {len(saved[key])} entries; this environment "
                    f"has {len(target)}"
                )
            if _is_generators(target):
                checked[key] = [json.loads(text) for text in saved[key]]
            else:
                for item, part in zip(target, saved[key], strict=True):
                    check_keys(f"env state {key!r}", part, item.state_dict())
                checked[key] = saved[key]
    for key, value in checked.items():
        target = live[key]
        if isinstance(target, np.ndarray):
            target[...] = value
        elif _is_generators(target):
            for generator, bit_state in zip(target, value, strict=True):
                generator.bit_generator.state = bit_state
        else:
            for item, part in zip(target, value, strict=True):
                item.load_state_dict(part)
