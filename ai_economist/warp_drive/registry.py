"""The one registry of environments: ``--env NAME``, ``evaluate`` and ``EnvironmentRegistrar``
look names up here.

An environment package registers once, on import of its registration module, with
:func:`register_env` (or :func:`register_gpu_training_env` for a ``GpuEnvironment`` class):
its builder, its backends, its policy mapping and its folder of packaged run configs.

**Discovery.** The registry finds registration modules through the entry-point group
``ai_economist.environments`` and through nothing else: generic code reads the entry points
only (no built-in list of scenarios). Each entry point names a module whose import registers
environments::

    [project.entry-points."ai_economist.environments"]
    my_env = "my_env_package.registration"

This project's own scenarios and examples are declared the same way in its ``pyproject.toml``,
so a checkout must be installed (``pip install -e .``, what ``make venv`` does) for them to
appear; a program may still call :func:`register_env` itself. Modules are imported lazily, on
the first lookup or listing. A module that fails to import is recorded, not raised: every
other environment still works; looking up the entry point's own name raises
:class:`EnvironmentImportError` naming the package and the exception, and listing the names
warns about it. Two modules registering one name is an :class:`DuplicateEnvironmentError`
naming both.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend, resolve_backend
from ai_economist.warp_drive.data_manager import close_matches_message
from ai_economist.warp_drive.errors import UnknownNameError

ENTRY_POINT_GROUP = "ai_economist.environments"
"""The entry-point group that environment packages declare their registration modules in."""

Builder = Callable[[dict, Any, EnvBackend], Any]
"""``build(run_config, device, env_backend)``: ``trainer.num_envs`` envs as a
``BatchedPolicyEnv`` on the resolved backend."""

HOST_BACKENDS: tuple[EnvBackend, ...] = (EnvBackend.NUMPY, EnvBackend.CPU)


class DuplicateEnvironmentError(ValueError):
    """Two modules registered one environment name."""


class EnvironmentImportError(ImportError):
    """An entry point's registration module failed to import."""


class EnvironmentImportWarning(UserWarning):
    """Listing the environments skipped an entry point that failed to import."""


def default_policy_mapping(env: Any) -> dict[str, list[str]]:
    """The env's own ``policy_tag_to_agent_id_map`` (``EnvWrapper``), else
    ``{"a": ["0", ..., "N-1"], "p": ["p"]}`` from its policy specs."""
    own = getattr(env, "policy_tag_to_agent_id_map", None)
    if own is not None:
        return dict(own)
    return {
        tag: ["p"] if tag == "p" else [str(i) for i in range(spec.num_agents)]
        for tag, spec in env.policy_specs.items()
    }


@dataclass(frozen=True)
class EnvEntry:
    """How to build an environment for training, and what it offers.

    Attributes:
        build: ``build(run_config, device, env_backend)`` with a resolved ``EnvBackend``;
            call :meth:`make` to resolve ``trainer.env_backend`` first.
        obs_dim_corresponding_to_num_agents: ``"first"`` or ``"last"`` (the trainer's layout).
        env_class: returns the constructor the ``env`` block's keys are checked against.
        build_one: one env on the CPU from the ``env`` block, to run its value checks.
        build_eval: ``(one env on the CPU, scenario object with a dense log)`` for ``evaluate``.
        backends: the ``EnvBackend`` values it steps on, or ``backends(run_config)`` for
            those that depend on the config; ``"auto"`` picks among them (``resolve_backend``).
        policy_mapping: ``policy_mapping(env)`` -> agent ids per policy tag.
        config_dir: its folder of packaged run configs (``<name>.yaml`` is the default).
        kernel_sources: ``{"pycuda": .cu path, "numba": module}`` for ``EnvironmentRegistrar``.
        parity: ``parity(backend, num_envs, seed)`` -> a ``checks.parity.ParityCase`` (its
            reference and backend wrappers, fields and tolerances) for
            ``python -m ai_economist.warp_drive.checks.parity``; ``GpuEnvironment`` classes
            get one by default (``register_gpu_training_env``).
        origin: who registered it (set by the registry).
    """

    build: Builder
    obs_dim_corresponding_to_num_agents: str = "last"
    env_class: Callable[[], Callable] | None = None
    build_one: Callable[[dict], Any] | None = None
    build_eval: Callable[[dict], tuple[Any, Any]] | None = None
    backends: tuple[EnvBackend, ...] | Callable[[dict], tuple[EnvBackend, ...]] = HOST_BACKENDS
    policy_mapping: Callable[[Any], dict[str, list[str]]] = default_policy_mapping
    config_dir: Path | None = None
    kernel_sources: Mapping[str, str] = field(default_factory=dict)
    parity: Callable[[str, int, int], Any] | None = None
    origin: str = ""

    def __post_init__(self) -> None:
        if not callable(self.backends):
            object.__setattr__(self, "backends", tuple(EnvBackend.parse(b) for b in self.backends))
        if self.config_dir is not None:
            object.__setattr__(self, "config_dir", Path(self.config_dir))

    def available_backends(self, run_config: Mapping[str, Any]) -> tuple[EnvBackend, ...]:
        """The backends this env offers for ``run_config``."""
        found = self.backends(dict(run_config)) if callable(self.backends) else self.backends
        return tuple(EnvBackend.parse(b) for b in found)

    def resolve_backend(
        self, run_config: Mapping[str, Any], device: Any, requested: Any = None
    ) -> EnvBackend:
        """``requested`` (else ``trainer.env_backend``, else ``"auto"``) resolved for
        ``device`` by the one rule of :func:`~.backend_names.resolve_backend`."""
        if requested is None:
            requested = run_config.get("trainer", {}).get("env_backend", "auto")
        return resolve_backend(requested, self.available_backends(run_config), device)

    def make(self, run_config: dict, device: Any, env_backend: Any = None) -> Any:
        """The batched env of ``run_config`` on ``device``, ``env_backend`` resolved first."""
        return self.build(run_config, device, self.resolve_backend(run_config, device, env_backend))


@dataclass(frozen=True)
class _Failure:
    entry_point: str
    module: str
    package: str
    error: BaseException

    def message(self) -> str:
        return (
            f"environment package {self.package!r} (entry point {self.entry_point!r} = "
            f"{self.module!r} in group {ENTRY_POINT_GROUP!r}) failed to import: "
            f"{type(self.error).__name__}: {self.error}"
        )


def entry_points_of(group: str) -> list[tuple[Any, str]]:
    """``(entry point, distribution name)`` of ``group`` from every distribution on the path.

    ``importlib.metadata.entry_points`` keeps one distribution per name, the first on
    ``sys.path``; a stale ``*.egg-info`` folder in the working directory (left by an editable
    install) would then hide the installed metadata, so every distribution is read here.
    """
    from importlib.metadata import distributions

    found: dict[tuple[str, str], tuple[Any, str]] = {}
    for dist in distributions():
        for ep in dist.entry_points:
            if ep.group == group:
                found.setdefault((ep.name, ep.value), (ep, dist.metadata["Name"] or "?"))
    return [found[key] for key in sorted(found)]


_FACADE_MODULES = {
    __name__,
    "ai_economist.training.environments",
    "ai_economist.warp_drive.registrar",
}


def _caller_module() -> str:
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") in _FACADE_MODULES:
        frame = frame.f_back
    return frame.f_globals.get("__name__", "?") if frame is not None else "?"


class Registry(Mapping):
    """Name -> :class:`EnvEntry`; the registration modules of the entry-point ``group`` (and
    the dotted module names ``providers``, for tests) are imported on the first lookup.

    Args:
        providers: registration modules imported on the first lookup, before the entry points.
        group: the entry-point group to discover (``None``: no discovery).
    """

    def __init__(self, providers: tuple[str, ...] = (), group: str | None = None) -> None:
        self._entries: dict[str, EnvEntry] = {}
        self._providers = list(providers)
        self._group = group
        self._discovered = group is None
        self._loading: str | None = None
        self._failures: list[_Failure] = []
        self._entry_point_count = 0

    # ------------------------------------------------------------------ discovery
    def _load(self) -> None:
        if self._loading is not None:
            return  # a registration module looked a name up while being imported
        while self._providers:
            module = self._providers.pop(0)
            self._import(module, f"module {module!r}", module, module)
        if not self._discovered:
            self._discovered = True
            found = entry_points_of(self._group)
            self._entry_point_count = len(found)
            for ep, package in found:
                self._import(ep.module, f"package {package!r} ({ep.module})", ep.name, package)

    def _import(self, module: str, origin: str, ep_name: str, package: str) -> None:
        self._loading = origin
        try:
            importlib.import_module(module)
        except Exception as exc:  # recorded; every other environment still works
            self._failures.append(_Failure(ep_name, module, package, exc))
        finally:
            self._loading = None

    def failures(self) -> list[str]:
        """One message per registration module that failed to import."""
        self._load()
        return [f.message() for f in self._failures]

    # ------------------------------------------------------------------ registration
    def register(self, name: str, entry: EnvEntry, origin: str | None = None) -> None:
        """Add ``entry`` under ``name``; a second registration of ``name`` from another
        module raises :class:`DuplicateEnvironmentError` naming both (the same module may
        register again, e.g. when it is reloaded)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"environment names must be non-empty strings, got {name!r}")
        if not isinstance(entry, EnvEntry):
            raise TypeError(f"register expects an EnvEntry, got {type(entry).__name__}")
        origin = origin or self._loading or f"module {_caller_module()!r}"
        old = self._entries.get(name)
        if old is not None and old.origin != origin:
            raise DuplicateEnvironmentError(
                f"environment {name!r} is registered twice: by {old.origin} and by {origin}; "
                "rename one of them (each name belongs to one package)"
            )
        self._entries[name] = dataclasses.replace(entry, origin=origin)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (no error if it is not registered)."""
        self._entries.pop(name, None)

    # ------------------------------------------------------------------ lookups
    def __getitem__(self, name: str) -> EnvEntry:
        if name not in self._entries:
            self._load()
        try:
            return self._entries[name]
        except KeyError:
            pass
        for failure in self._failures:
            if failure.entry_point == name:
                raise EnvironmentImportError(failure.message()) from failure.error
        message = close_matches_message(name, self._entries, "training environment")
        if self._failures:
            message += "; not loaded: " + "; ".join(f.message() for f in self._failures)
        if self._group is not None and self._entry_point_count == 0:
            message += (
                f" No package declares entry points of the group {self._group!r}: install "
                "ai-economist (`pip install -e .` in a checkout) so that its environments "
                "register; a source tree on PYTHONPATH alone has no entry points"
            )
        raise UnknownNameError(message)

    def find(self, name: str) -> tuple[str, EnvEntry] | None:
        """``(registered name, entry)`` of ``name`` compared case-insensitively, or ``None``."""
        self._load()
        for key, entry in self._entries.items():
            if key.lower() == name.lower():
                return key, entry
        return None

    def __contains__(self, name: object) -> bool:
        if name not in self._entries:
            self._load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self._load()
        for failure in self._failures:
            warnings.warn(failure.message(), EnvironmentImportWarning, stacklevel=2)
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    # ------------------------------------------------------------------ run configs
    def packaged_configs(self) -> dict[str, Path]:
        """Every packaged run config, by file stem, from each entry's ``config_dir``."""
        self._load()
        found: dict[str, Path] = {}
        dirs = sorted({e.config_dir for e in self._entries.values() if e.config_dir is not None})
        for folder in dirs:
            for path in sorted(folder.glob("*.yaml")):
                found.setdefault(path.stem, path)
        return found


ENVIRONMENTS = Registry(group=ENTRY_POINT_GROUP)
"""The registry of this process (entry points of ``ai_economist.environments``)."""


def register_env(name: str, entry: EnvEntry, registry: Registry | None = None) -> None:
    """Register ``entry`` under ``name`` in ``registry`` (default :data:`ENVIRONMENTS`)."""
    (ENVIRONMENTS if registry is None else registry).register(name, entry)


def get_env(name: str) -> EnvEntry:
    """The entry registered under ``name`` (``UnknownNameError`` with close matches)."""
    return ENVIRONMENTS[name]


def env_names() -> list[str]:
    """Every registered name, sorted."""
    return sorted(ENVIRONMENTS)
