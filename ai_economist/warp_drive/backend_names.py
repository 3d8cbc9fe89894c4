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
    * ``PYCUDA``: CUDA C kernels compiled with nvcc; pycuda loads the module into torch's
      context and looks the kernels up (WarpDrive's name and path for this backend), and the
      launches go through the CUDA driver API on torch's current stream
      (:mod:`~ai_economist.warp_drive.driver_launch`), because pycuda launches on the legacy
      default stream, which a CUDA graph cannot capture;
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


def require(backend: object, allowed: tuple[EnvBackend, ...], where: str) -> EnvBackend:
    """``backend`` itself when it is an ``EnvBackend`` among ``allowed``: internal layers take
    the value parsed once at the public edge (``EnvWrapper``, the registry) and parse nothing.

    Raises:
        TypeError: a string or anything else (parse it with ``EnvBackend.parse`` first).
        ValueError: a backend that ``where`` does not run.
    """
    if not isinstance(backend, EnvBackend):
        raise TypeError(
            f"{where} takes an EnvBackend, got {backend!r}; parse names once with "
            "EnvBackend.parse (EnvWrapper and the registry do)"
        )
    if backend not in allowed:
        names = ", ".join(repr(b.value) for b in allowed)
        raise ValueError(f"{where} runs env_backend {names}, got {backend.value!r}")
    return backend


AUTO = "auto"
"""``trainer.env_backend: auto``: let :func:`resolve_backend` choose."""

_PREFERENCE_GPU = (EnvBackend.PYCUDA, EnvBackend.NUMBA, EnvBackend.NUMPY, EnvBackend.CPU)
_PREFERENCE_HOST = (EnvBackend.NUMPY, EnvBackend.CPU)


class BackendUnavailableError(ValueError):
    """The requested env backend is not one the environment has or the device allows."""


def _device_type(device: object) -> str:
    kind = getattr(device, "type", None)
    return kind if isinstance(kind, str) else str(device).split(":")[0].strip().lower()


def resolve_backend(
    requested: str | EnvBackend, available: tuple[EnvBackend, ...], device: object
) -> EnvBackend:
    """The one rule that turns ``trainer.env_backend`` into the backend a run steps on.

    ``"auto"`` is the fastest backend the environment has that the device allows: on a CUDA
    device ``pycuda``, then ``numba``, then ``numpy`` (batched host arrays), then ``cpu``
    (Python environment objects); on the CPU ``numpy``, then ``cpu`` (kernel backends need a
    GPU). An explicit name must be one the environment has, except that ``"cpu"`` means
    ``"numpy"`` for an environment without Python objects; a kernel backend needs a CUDA
    device (``numba`` also runs under ``NUMBA_ENABLE_CUDASIM=1``).

    Args:
        requested: ``"auto"``, an ``EnvBackend`` or its name.
        available: the environment's backends.
        device: the torch device (or its name) the run trains on.

    Raises:
        BackendUnavailableError: naming the value, the device and what is available.
    """
    from ai_economist.warp_drive.errors import cudasim_enabled

    on_gpu = _device_type(device) == "cuda"
    have = ", ".join(repr(b.value) for b in available) or "none"
    if isinstance(requested, str) and not isinstance(requested, EnvBackend):
        if requested.strip().lower() == AUTO:
            for backend in _PREFERENCE_GPU if on_gpu else _PREFERENCE_HOST:
                if backend in available:
                    return backend
            raise BackendUnavailableError(
                f"'trainer.env_backend' = 'auto': the environment has no backend that runs on "
                f"device {str(device)!r} (it has: {have})"
            )
    backend = EnvBackend.parse(requested)
    simulated = backend is EnvBackend.NUMBA and cudasim_enabled()
    if backend.is_gpu and not on_gpu and not simulated:
        raise BackendUnavailableError(
            f"'trainer.env_backend' = {backend.value!r} steps the env on the GPU and needs "
            f"trainer.device cuda, got {str(device)!r}; on the CPU use 'numpy' (batched "
            "arrays), 'cpu' (Python envs) or 'auto'"
        )
    if backend not in available:
        if backend is EnvBackend.CPU and EnvBackend.NUMPY in available:
            return EnvBackend.NUMPY
        raise BackendUnavailableError(
            f"'trainer.env_backend' = {backend.value!r}: the environment has no such backend "
            f"(it has: {have}; or use 'auto')"
        )
    return backend
