"""Per-environment random number generation.

Foundation 1.7.1 used the global ``np.random`` / ``random`` state (seeded by a static
``seed()``, seed > 0) and stored ``np.random.get_state()`` 5-tuples in the replay log.
This rebuild never touches global RNG state: every environment owns one
``numpy.random.Generator`` (reachable as ``env.rng`` and ``env.world.rng``), and the replay
log stores ``generator.bit_generator.state`` dicts.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def validate_seed(seed: Any, name: str = "seed") -> int | None:
    """Return ``seed`` as an int >= 0 (or None); raise TypeError/ValueError otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= 0 or None, got {seed!r}")
    if seed < 0:
        raise ValueError(f"{name} must be an int >= 0 or None, got {seed!r}")
    return int(seed)


def make_generator(seed: int | None = None) -> np.random.Generator:
    """A fresh PCG64 generator (``None`` = fresh OS entropy)."""
    return np.random.default_rng(validate_seed(seed))


def get_state(rng: np.random.Generator) -> dict[str, Any]:
    """The generator's ``bit_generator.state`` (numpy returns a fresh dict on every read)."""
    return rng.bit_generator.state


def set_state(rng: np.random.Generator, state: Any) -> np.random.Generator:
    """Restore ``state`` (a ``bit_generator.state`` dict); return the generator to use.

    The state is installed in place when ``rng`` has the same bit generator type (so code
    holding a reference keeps drawing from the restored stream); otherwise a new generator
    of the recorded type is returned.
    """
    if not isinstance(state, dict) or "bit_generator" not in state:
        raise TypeError(
            "seed_state must be a dict as returned by env.rng.bit_generator.state; the "
            "5-tuple global-RNG states of Foundation 1.x are not supported, got "
            f"{type(state).__name__}"
        )
    kind = state["bit_generator"]
    if kind not in _BIT_GENERATORS:
        raise ValueError(
            f"Unknown bit generator {kind!r} in seed_state; expected one of {_BIT_GENERATORS}"
        )
    state = copy.deepcopy(state)
    if type(rng.bit_generator).__name__ == kind:
        rng.bit_generator.state = state
        return rng
    bit_generator = getattr(np.random, kind)()
    bit_generator.state = state
    return np.random.Generator(bit_generator)
