"""WarpDrive's ``EnvironmentRegistrar`` on top of the one registry (:mod:`ai_economist.warp_drive.registry`).

* ``add_cuda_env_src_path(env_name, path, env_backend)`` records the kernel source of an
  environment: a ``.cu`` build file for ``"pycuda"``, or a dotted Python module of ``@cuda.jit``
  kernels for ``"numba"``.
* ``add`` / ``add_env`` register (dual-mode) environment classes per backend (``"cpu"``,
  ``"numpy"``, ``"pycuda"``, ``"numba"``: ``EnvBackend``); ``get(name, use_cuda)`` returns the
  class (``register_gpu_environment`` of :mod:`ai_economist.warp_drive.registrar` registers a
  ``GpuEnvironment`` for training).

A registrar holds WarpDrive-style overrides: a new ``EnvironmentRegistrar()`` looks up its own
registrations first, then ``default_registrar``'s, then the one registry (classes and kernel
sources of every registered environment, found through the ``ai_economist.environments``
entry points). Names are case-insensitive.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ai_economist.warp_drive import registry
from ai_economist.warp_drive.backend_names import GPU_BACKENDS as _GPU_BACKENDS
from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.data_manager import close_matches_message
from ai_economist.warp_drive.errors import UnknownNameError
from ai_economist.warp_drive.registry import EnvEntry

GPU_BACKENDS = tuple(b.value for b in _GPU_BACKENDS)
ENV_BACKENDS = tuple(b.value for b in EnvBackend)  # cpu, numpy, pycuda, numba


def _registry_items() -> list[tuple[str, EnvEntry]]:
    registry.ENVIRONMENTS._load()
    return list(registry.ENVIRONMENTS._entries.items())


def _from_entry(entry: EnvEntry, table: str, backend: str) -> Any:
    """The class (``table == "_envs"``) or kernel source (``"_src"``) ``entry`` registers for
    ``backend``, or ``None``."""
    if table == "_src":
        return entry.kernel_sources.get(backend)
    if entry.env_class is None or callable(entry.backends):
        return None
    return entry.env_class() if backend in entry.backends else None


def _check_backend(env_backend: str | EnvBackend, allowed: tuple[str, ...]) -> str:
    return EnvBackend.parse(env_backend, tuple(EnvBackend(a) for a in allowed)).value


def _env_name(cls: type) -> str:
    name = getattr(cls, "name", None)
    return name if isinstance(name, str) and name else cls.__name__


class EnvironmentRegistrar:
    """Registry of environment classes and kernel sources per backend.

    Args:
        use_defaults: fall back to ``default_registrar`` for names not registered here.
    """

    def __init__(self, use_defaults: bool = True) -> None:
        self._use_defaults = use_defaults
        self._src: dict[str, dict[str, tuple[str, str]]] = {b: {} for b in GPU_BACKENDS}
        self._envs: dict[str, dict[str, tuple[str, type]]] = {b: {} for b in ENV_BACKENDS}
        self._providers: list[str] = []

    # ------------------------------------------------------------------ lookups
    def _fallback(self) -> EnvironmentRegistrar | None:
        if self._use_defaults and self is not default_registrar:
            return default_registrar
        return None

    def _load_providers(self) -> bool:
        loaded = False
        while self._providers:
            importlib.import_module(self._providers.pop(0))
            loaded = True
        return loaded

    def _uses_registry(self) -> bool:
        return self is default_registrar or self._use_defaults

    def _lookup(self, table: str, backend: str, name: str):
        key = name.lower()
        for registrar in (self, self._fallback()):
            if registrar is None:
                continue
            entries = getattr(registrar, table)[backend]
            if key not in entries and registrar._load_providers():
                entries = getattr(registrar, table)[backend]
            if key in entries:
                return entries[key][1]
        if self._uses_registry():
            found = registry.ENVIRONMENTS.find(name)
            if found is not None:
                return _from_entry(found[1], table, backend)
        return None

    def _known(self, table: str, backend: str) -> list[str]:
        names = {v[0] for v in getattr(self, table)[backend].values()}
        fallback = self._fallback()
        if fallback is not None:
            names |= {v[0] for v in getattr(fallback, table)[backend].values()}
        if self._uses_registry():
            for name, entry in _registry_items():
                if _from_entry(entry, table, backend) is not None:
                    names.add(name)
        return sorted(names)

    # ------------------------------------------------------------------ kernel sources
    def add_cuda_env_src_path(
        self, env_name: str, path: str | os.PathLike, env_backend: str = "pycuda"
    ) -> None:
        """Register the kernel source of ``env_name`` for a GPU backend.

        Args:
            env_name: the environment's name (its ``name`` attribute).
            path: a ``.cu`` build file (pycuda) or a dotted module path (numba).
            env_backend: ``"pycuda"`` or ``"numba"``.
        """
        _check_backend(env_backend, GPU_BACKENDS)
        if not isinstance(env_name, str) or not env_name:
            raise ValueError(f"env_name must be a non-empty string, got {env_name!r}.")
        if env_backend == "pycuda":
            src = Path(path)
            if src.suffix != ".cu":
                raise ValueError(f"The pycuda backend needs a .cu build file, got {str(path)!r}.")
            if not src.is_file():
                raise FileNotFoundError(f"CUDA source {src} for {env_name!r} does not exist.")
            value = str(src.resolve())
        else:
            value = str(path)
            if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", value):
                raise ValueError(
                    f"The numba backend needs a dotted Python module path such as "
                    f"'package.module', got {value!r}."
                )
        self._src[env_backend][env_name.lower()] = (env_name, value)

    def get_cuda_env_src_path(self, env_name: str, env_backend: str = "pycuda") -> str:
        """The registered kernel source of ``env_name`` (custom registrations first)."""
        _check_backend(env_backend, GPU_BACKENDS)
        found = self._lookup("_src", env_backend, env_name)
        if found is None:
            raise UnknownNameError(
                close_matches_message(
                    env_name, self._known("_src", env_backend), f"{env_backend} env"
                )
            )
        return found

    # ------------------------------------------------------------------ env classes
    def add_env(
        self,
        cls: type,
        env_backend: str | Iterable[str] = "cpu",
        cuda_env_src_path: str | os.PathLike | Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> type:
        """Register ``cls`` for one or several backends (``"cpu"``, ``"pycuda"``, ``"numba"``).

        ``cuda_env_src_path`` is a path for the single GPU backend given, or a mapping
        ``{backend: path}``; it is recorded with ``add_cuda_env_src_path``.
        """
        if not isinstance(cls, type):
            raise TypeError(f"add_env expects a class, got {cls!r}.")
        backends = [env_backend] if isinstance(env_backend, str) else list(env_backend)
        for b in backends:
            _check_backend(b, ENV_BACKENDS)
        env_name = name or _env_name(cls)
        for b in backends:
            self._envs[b][env_name.lower()] = (env_name, cls)
        if cuda_env_src_path is not None:
            if isinstance(cuda_env_src_path, Mapping):
                sources = dict(cuda_env_src_path)
            else:
                gpu = [b for b in backends if b in GPU_BACKENDS]
                if len(gpu) != 1:
                    raise ValueError(
                        "Pass cuda_env_src_path as {backend: path} unless exactly one GPU backend "
                        f"is given (got env_backend={env_backend!r})."
                    )
                sources = {gpu[0]: cuda_env_src_path}
            for b, path in sources.items():
                self.add_cuda_env_src_path(env_name, path, b)
        return cls

    def add(
        self,
        env_backend: str | Iterable[str] = "cpu",
        cuda_env_src_path: str | os.PathLike | Mapping[str, Any] | None = None,
    ) -> Callable[[type], type]:
        """Class decorator form of ``add_env``."""

        def decorator(cls: type) -> type:
            return self.add_env(cls, env_backend, cuda_env_src_path)

        return decorator

    def get(self, name: str, use_cuda: bool = False, env_backend: str | None = None) -> type:
        """The environment class ``name``.

        Args:
            name: environment name (case-insensitive).
            use_cuda: look among the GPU registrations (pycuda first, then numba).
            env_backend: an explicit backend; overrides ``use_cuda``.
        """
        if env_backend is not None:
            backends: tuple[str, ...] = (_check_backend(env_backend, ENV_BACKENDS),)
        else:
            backends = GPU_BACKENDS if use_cuda else ("cpu",)
        for b in backends:
            found = self._lookup("_envs", b, name)
            if found is not None:
                return found
        known = sorted({n for b in backends for n in self._known("_envs", b)})
        raise UnknownNameError(
            close_matches_message(name, known, f"environment for backend(s) {'/'.join(backends)}")
        )

    def has_env(self, env_name: str, env_backend: str = "cpu") -> bool:
        """True if a class is registered for ``env_backend`` or, for GPU backends, a kernel source."""
        _check_backend(env_backend, ENV_BACKENDS)
        if self._lookup("_envs", env_backend, env_name) is not None:
            return True
        return (
            env_backend in GPU_BACKENDS and self._lookup("_src", env_backend, env_name) is not None
        )

    def add_provider(self, module_name: str) -> None:
        """Import ``module_name`` (which registers environments) on the first lookup that misses.

        Deprecated: name the module in the entry-point group ``ai_economist.environments``
        instead (:mod:`ai_economist.warp_drive.registry`), so that it registers once.
        """
        import warnings

        warnings.warn(
            "EnvironmentRegistrar.add_provider is deprecated: declare the module in the "
            "entry-point group 'ai_economist.environments' (ai_economist.warp_drive.registry)",
            DeprecationWarning,
            stacklevel=2,
        )
        if module_name not in self._providers:
            self._providers.append(module_name)

    def env_names(self, env_backend: str = "cpu") -> list[str]:
        """Registered environment names for a backend (classes and, for GPU, kernel sources)."""
        _check_backend(env_backend, ENV_BACKENDS)
        self._load_providers()
        fallback = self._fallback()
        if fallback is not None:
            fallback._load_providers()
        names = set(self._known("_envs", env_backend))
        if env_backend in GPU_BACKENDS:
            names |= set(self._known("_src", env_backend))
        return sorted(names)


default_registrar = EnvironmentRegistrar(use_defaults=False)
