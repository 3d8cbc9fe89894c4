"""WarpDrive's registrar API: ``EnvironmentRegistrar`` and ``default_registrar`` (defined in
:mod:`ai_economist.warp_drive.env_registrar`, which :class:`~.env_wrapper.EnvWrapper` looks
names up in), and ``register_gpu_environment(cls)``, which registers a ``GpuEnvironment`` in the
one registry (training, ``--env NAME``) with the backends its kernels support and builds it
behind ``EnvWrapper`` (``build_gpu_env``).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from ai_economist.warp_drive import registry
from ai_economist.warp_drive.backend_names import EnvBackend, resolve_backend
from ai_economist.warp_drive.env_registrar import (  # noqa: F401  (WarpDrive's import path)
    ENV_BACKENDS,
    GPU_BACKENDS,
    EnvironmentRegistrar,
    default_registrar,
)
from ai_economist.warp_drive.registry import EnvEntry

"""WarpDrive-style registrations made in this process; lookups that miss fall back to the
one registry (:data:`~ai_economist.warp_drive.registry.ENVIRONMENTS`)."""


def _gpu_backends_of(cls: type) -> dict[str, str]:
    kernels = cls().kernels()
    kernel_sources = (
        (EnvBackend.PYCUDA, kernels.cuda_source),
        (EnvBackend.NUMBA, kernels.numba_module),
    )
    return {backend.value: str(src) for backend, src in kernel_sources if src is not None}


def _config_dir_of(cls: type) -> Path | None:
    """``run_configs/`` beside the module of ``cls``; ``None`` without one (or for a class
    defined in ``__main__`` or a notebook, which has no file)."""
    try:
        folder = Path(inspect.getfile(cls)).resolve().parent / "run_configs"
    except (TypeError, OSError):
        return None
    return folder if folder.is_dir() else None


def build_gpu_env(
    env_class: type, run_config: dict, device: Any, env_backend: EnvBackend | None = None
) -> Any:
    """``env_class(**run_config["env"])`` behind ``EnvWrapper``, ``trainer.num_envs`` copies
    on ``env_backend`` (resolved by the registry; ``None``: resolved here by the same rule).

    The initial state is seeded with ``trainer.seed`` plus the process's rank (the GPU index
    on one host).
    """
    import torch

    from ai_economist.warp_drive.env_wrapper import EnvWrapper
    from ai_economist.warp_drive.training.distributed import seed_offset

    device = torch.device(device)
    if env_backend is None:
        available = (EnvBackend.NUMPY, *map(EnvBackend, _gpu_backends_of(env_class)))
        requested = run_config["trainer"].get("env_backend", "auto")
        env_backend = resolve_backend(requested, available, device)
    env = env_class(**run_config["env"])
    return EnvWrapper(
        env,
        num_envs=run_config["trainer"]["num_envs"],
        env_backend=env_backend,
        device=device if env_backend is not EnvBackend.NUMPY else None,
        seed=int(run_config["trainer"].get("seed", 0)) + seed_offset(device),
    )


def gpu_parity_hook(env_class: type) -> Any:
    """The registry's ``parity`` hook of a ``GpuEnvironment`` class: ``env_class()`` (default
    arguments) against its numpy reference (``checks.parity.gpu_environment_case``)."""

    def parity(backend: str, num_envs: int, seed: int) -> Any:
        from ai_economist.warp_drive.checks.parity import gpu_environment_case

        return gpu_environment_case(env_class(), backend, num_envs, seed)

    return parity


def register_gpu_training_env(env_class: type, name: str | None = None) -> None:
    """Make the ``GpuEnvironment`` class ``env_class`` trainable under ``name`` (default
    ``env_class.name``) behind ``EnvWrapper``: backends ``numpy`` plus each GPU backend its
    ``kernels()`` name a source for; run configs from a ``run_configs/`` folder beside the
    class's module."""
    name = name or getattr(env_class, "name", None)
    if not name:
        raise ValueError(f"{env_class.__name__} has no name; set the class attribute 'name'")
    sources = _gpu_backends_of(env_class)

    def build(run_config: dict, device: Any, env_backend: EnvBackend | None = None) -> Any:
        return build_gpu_env(env_class, run_config, device, env_backend)

    entry = EnvEntry(
        build,
        "first",
        lambda: env_class,
        lambda block: env_class(**block),
        backends=(EnvBackend.NUMPY, *map(EnvBackend, sources)),
        config_dir=_config_dir_of(env_class),
        kernel_sources=sources,
        parity=gpu_parity_hook(env_class),
    )
    registry.ENVIRONMENTS.register(name, entry)


def register_gpu_environment(
    cls: type, registrar: EnvironmentRegistrar | None = None, training: bool = True
) -> type:
    """Register the ``GpuEnvironment`` class ``cls`` under its ``name`` for ``"numpy"`` and
    for each GPU backend its ``kernels()`` name a source for (``cuda_source``: ``"pycuda"``,
    ``numba_module``: ``"numba"``): with ``training``, in the one registry
    (``register_gpu_training_env``: ``--env NAME``, and ``default_registrar``'s lookups);
    with a ``registrar`` of your own, also there; with neither, in ``default_registrar``.
    ``cls()`` must build with its default arguments.
    """
    if registrar is not None or not training:
        sources = _gpu_backends_of(cls)
        target = default_registrar if registrar is None else registrar
        target.add_env(cls, (EnvBackend.NUMPY.value, *sources), cuda_env_src_path=sources)
    if training:
        register_gpu_training_env(cls)
    return cls
