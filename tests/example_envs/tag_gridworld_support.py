"""Host state of grid-world Tag for tests: every declared field, reset of done envs, stepping."""

from __future__ import annotations

import numpy as np

from ai_economist.example_envs.tag_gridworld import TagGridWorld


def host_state(env: TagGridWorld, num_envs: int, seed: int | None = 0) -> dict[str, np.ndarray]:
    """Every declared field: per-env ``(num_envs, *shape)``, constants ``shape``; zeros unless
    ``initial_state`` gives a value."""
    initial = env.initial_state(num_envs, seed)
    state = {}
    for f in env.state_spec():
        shape = (num_envs, *f.shape) if f.per_env else f.shape
        value = initial.get(f.name)
        state[f.name] = np.zeros(shape, f.dtype) if value is None else np.array(value, f.dtype)
        assert state[f.name].shape == shape, f.name
    return state


def reset_done_envs(env: TagGridWorld, state: dict, initial: dict) -> None:
    """What the wrapper does after a step: done envs get their snapshot / zeros back."""
    done = state["_done_"] == 1
    for f in env.state_spec():
        if not f.per_env or f.reset == "none":
            continue
        source = initial[f.name] if f.reset == "snapshot" else np.zeros_like(state[f.name])
        state[f.name][done] = source[done]


def kernel_arrays(env: TagGridWorld, state: dict) -> list:
    """The step kernel's arguments, in declaration order (constants as typed scalars)."""
    return [
        state[f.name][()] if f.is_scalar_constant else state[f.name]
        for f in env.state_spec().kernel_fields()
    ]
