"""Helpers for saving and restoring a batched environment's state (exact checkpoint resume).

Environments that implement :class:`~ai_economist.warp_drive.env_protocol.StatefulEnv`
return their state as nested dicts of numpy arrays, torch tensors and plain values.  These
helpers check a saved state against the live environment (:func:`checked_array`,
:func:`check_keys`, raising :class:`EnvStateMismatch` with the offending key) and convert it
to what ``torch.load(weights_only=True)`` accepts (:func:`to_checkpoint`: numpy arrays become
CPU tensors, numpy scalars Python numbers).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np


class EnvStateMismatch(ValueError):
    """A saved env state does not fit this environment (other backend, sizes or fields)."""


def as_numpy(value: Any) -> np.ndarray:
    """``value`` (numpy array, torch tensor on any device, nested list or scalar) on the host."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def checked_array(
    key: str, value: Any, shape: tuple[int, ...], dtype: np.dtype | None = None
) -> np.ndarray:
    """``value`` as a numpy array, checked to have ``shape`` (and ``dtype`` when given).

    Raises:
        EnvStateMismatch: naming ``key``, the saved and the expected shape or dtype.
    """
    arr = as_numpy(value)
    if arr.shape != tuple(shape):
        raise EnvStateMismatch(
            f"env state {key!r} has shape {arr.shape}; this environment needs {tuple(shape)} "
            f"(saved with other num_envs or scenario settings?)"
        )
    if dtype is not None and arr.dtype != np.dtype(dtype):
        raise EnvStateMismatch(
            f"env state {key!r} has dtype {arr.dtype}; this environment needs {np.dtype(dtype)}"
        )
    return arr


def check_keys(what: str, saved: Mapping[str, Any], expected: Iterable[str]) -> None:
    """Raise :class:`EnvStateMismatch` unless ``saved`` has exactly the ``expected`` keys."""
    expected = list(expected)
    missing = [k for k in expected if k not in saved]
    extra = sorted(set(saved) - set(expected))
    if missing or extra:
        raise EnvStateMismatch(
            f"{what}: the saved env state lacks {missing} and has unexpected {extra}"
        )


def check_header(state: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """Compare the identifying entries of a saved state (backend, num_envs, ...).

    Raises:
        EnvStateMismatch: naming the first entry that differs.
    """
    if not isinstance(state, Mapping):
        raise EnvStateMismatch(f"an env state must be a dict, got {type(state).__name__}")
    for key, value in expected.items():
        saved = state.get(key, "<missing>")
        if saved != value:
            raise EnvStateMismatch(
                f"env state {key!r} is {saved!r}; this environment has {value!r}"
            )


def to_checkpoint(value: Any) -> Any:
    """A copy of a nested env state that ``torch.load(weights_only=True)`` can read back.

    numpy arrays become (contiguous) CPU tensors, tensors are moved to the CPU, numpy scalars
    become Python numbers; dicts, lists and tuples are converted element by element.
    """
    import torch

    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.array(value, order="C", copy=True))
    if torch.is_tensor(value):
        return value.detach().cpu().clone()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {k: to_checkpoint(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(to_checkpoint(v) for v in value)
    return value
