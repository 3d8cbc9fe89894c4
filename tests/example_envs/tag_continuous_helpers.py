"""Host arrays for continuous Tag tests: every declared field, batched over environments."""

from __future__ import annotations

import numpy as np

from ai_economist.example_envs.tag_continuous import TagContinuous


def host_state(env: TagContinuous, num_envs: int, seed: int | None = 0) -> dict[str, np.ndarray]:
    """Every field of ``env.state_spec()`` as numpy: per-env fields ``(num_envs, *shape)``."""
    initial = env.initial_state(num_envs, seed)
    state = {}
    for f in env.state_spec():
        shape = (num_envs, *f.shape) if f.per_env else f.shape
        value = initial.get(f.name)
        if f.is_scalar_constant:
            state[f.name] = f.dtype.type(value)
        elif value is None:
            state[f.name] = np.zeros(shape, f.dtype)
        else:
            state[f.name] = np.array(np.broadcast_to(value, shape), f.dtype)
    return state


def set_actions(state: dict[str, np.ndarray], actions: np.ndarray, num_taggers: int) -> None:
    """Write ``actions`` ``(E, N)`` into the taggers' and the runners' action arrays."""
    state["sampled_actions_tagger"][...] = actions[:, :num_taggers]
    state["sampled_actions_runner"][...] = actions[:, num_taggers:]


def numba_step(
    env: TagContinuous, state: dict[str, np.ndarray], num_envs: int, threads: int | None = None
) -> None:
    """Launch the Numba kernel on the host arrays (``NUMBA_ENABLE_CUDASIM=1``) with ``threads``
    threads an environment (default ``env.threads_per_env``, as the backends launch it)."""
    from ai_economist.example_envs.tag_continuous import tag_continuous_numba

    args = [state[f.name] for f in env.state_spec().kernel_fields()]
    block = env.threads_per_env if threads is None else threads
    tag_continuous_numba.TagContinuousStep[num_envs, block](*args)
