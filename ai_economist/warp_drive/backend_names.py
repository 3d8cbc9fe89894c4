"""The environment backends, named once.

``EnvBackend.parse("numba")`` accepts the enum or its (case-insensitive) string value and
raises a ``ValueError`` listing the allowed names otherwise.
"""

from __future__ import annotations

from enum import Enum


class EnvBackend(str, Enum):
    """Where a batch of environments steps.

    * ``CPU``: Python copies of the environment, one per env (the original CPU path);
    * ``NUMPY``: every env batched in host arrays, stepped by the numpy reference;
    * ``PYCUDA``: CUDA C kernels compiled with nvcc, launched through pycuda;
    * ``NUMBA``: Numba ``@cuda.jit`` kernels (or Numba's CUDA simulator on the CPU).
    """

    CPU = "cpu"
    NUMPY = "numpy"
    PYCUDA = "pycuda"
    NUMBA = "numba"

    def __str__(self) -> str:
        return self.value

    @property
    def is_gpu(self) -> bool:
        """True for the kernel backends (``pycuda``, ``numba``)."""
        return self in (EnvBackend.PYCUDA, EnvBackend.NUMBA)

    @classmethod
    def parse(cls, value: str | EnvBackend, allowed: tuple[EnvBackend, ...] | None = None):
        """``value`` as an ``EnvBackend``; a clear ``ValueError`` for anything else.

        Args:
            value: an ``EnvBackend`` or one of the strings ``"cpu"``, ``"numpy"``, ``"pycuda"``,
                ``"numba"`` (any case).
            allowed: restrict the accepted backends (default: all of them).
        """
        allowed = tuple(cls) if allowed is None else tuple(allowed)
        names = ", ".join(repr(b.value) for b in allowed)
        if isinstance(value, cls):
            backend = value
        elif isinstance(value, str) and value.strip().lower() in {b.value for b in cls}:
            backend = cls(value.strip().lower())
        else:
            raise ValueError(f"Unknown env_backend {value!r}; allowed: {names}.")
        if backend not in allowed:
            raise ValueError(
                f"env_backend {backend.value!r} is not available here; allowed: {names}."
            )
        return backend


GPU_BACKENDS: tuple[EnvBackend, ...] = (EnvBackend.PYCUDA, EnvBackend.NUMBA)
"""The kernel backends."""
