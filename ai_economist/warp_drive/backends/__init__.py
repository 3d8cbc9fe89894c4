"""Backends of the generic environment path: ``numpy`` (batched reference), ``pycuda`` and
``numba`` (kernels). ``make_backend`` builds one from an ``EnvBackend`` name."""

from __future__ import annotations

from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend, require


def make_backend(
    env: Any,
    num_envs: int,
    env_backend: EnvBackend,
    seed: int | None = 0,
    device: Any = None,
    source: str | None = None,
):
    """A backend stepping ``num_envs`` copies of the ``GpuEnvironment`` ``env``.

    Args:
        env: the environment (declaration, reference step, kernels).
        num_envs: environments stepped together.
        env_backend: ``EnvBackend.NUMPY``, ``PYCUDA`` or ``NUMBA`` (parsed by the caller).
        seed: passed to ``env.initial_state``.
        device: torch device of the kernel backends (``"cuda"`` by default; ``"cpu"`` under
            ``NUMBA_ENABLE_CUDASIM=1``).
        source: a kernel source that replaces ``env.kernels()``'s (a ``.cu`` file or a
            Numba module), e.g. from an ``EnvironmentRegistrar``.
    """
    backend = require(env_backend, tuple(EnvBackend), "make_backend")
    if backend is EnvBackend.NUMPY:
        from ai_economist.warp_drive.backends.numpy import NumpyBackend

        return NumpyBackend(env, num_envs, seed)
    if backend is EnvBackend.CPU:
        raise ValueError(
            f"environment {env.name!r}: env_backend 'cpu' steps Python environment objects "
            "(Foundation environments); a GpuEnvironment steps on the host with "
            "env_backend='numpy' (its batched numpy reference)."
        )
    from ai_economist.warp_drive.backends.gpu import KernelBackend

    return KernelBackend(env, num_envs, backend, seed, device, source)
