"""The one registry of trainable environments: ``--env NAME`` looks names up here.

Built in: the toy env here; the Foundation scenarios (COVID-19, the one-step economy,
gather-trade-build) and the example environments of ``ai_economist.example_envs`` register
themselves from their own packages, imported lazily on the first lookup
(``SCENARIO_REGISTRATION_MODULES``, ``example_envs.REGISTRATION_MODULES``). Any ``GpuEnvironment`` class trains on
the generic path with one line::

    register_gpu_training_env(MyEnv)            # then: training_script --env my_env

Its ``build`` makes ``MyEnv(**config["env"])`` behind ``EnvWrapper``; ``trainer.env_backend``
``auto`` is ``pycuda`` on a CUDA device and ``numpy`` on the CPU (``cpu`` also means ``numpy``
for these environments: they have no Python-object path).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.data_manager import close_matches_message
from ai_economist.warp_drive.errors import UnknownNameError

Builder = Callable[[dict, Any, "str | None"], Any]


@dataclass(frozen=True)
class EnvEntry:
    """How to build an environment for training, and how its agents are laid out."""

    build: Builder
    obs_dim_corresponding_to_num_agents: str = "last"
    env_class: Callable[[], Callable] | None = None  # for checking the env block's keys
    build_one: Callable[[dict], Any] | None = None  # one env on the CPU, to check the values
    # one env on the CPU for ``evaluate``: (batched env, scenario object with a dense log)
    build_eval: Callable[[dict], tuple[Any, Any]] | None = None


def build_toy_env(run_config: dict, device: Any, env_backend: str | None = None) -> Any:
    """The toy target-matching environment (any torch device; process ``i`` of a
    data-parallel run adds ``i`` to the seed)."""
    from ai_economist.warp_drive.training.distributed import seed_offset
    from ai_economist.warp_drive.training.toy_env import ToyTargetEnv

    kwargs = dict(run_config["env"])
    kwargs["seed"] = kwargs.get("seed", 0) + seed_offset(device)
    return ToyTargetEnv(num_envs=run_config["trainer"]["num_envs"], device=device, **kwargs)


def _toy_env_class() -> Callable:
    from ai_economist.warp_drive.training.toy_env import ToyTargetEnv

    return ToyTargetEnv


def _one_toy_env(env_block: dict) -> Any:
    return _toy_env_class()(num_envs=1, device="cpu", **env_block)


def build_gpu_env(
    env_class: type, run_config: dict, device: Any, env_backend: str | None = None
) -> Any:
    """``env_class(**run_config["env"])`` behind ``EnvWrapper`` (see the module docstring).

    The initial state is seeded with ``trainer.seed`` plus the process's rank (the GPU index
    on one host).
    """
    import torch

    from ai_economist.warp_drive.env_wrapper import EnvWrapper
    from ai_economist.warp_drive.errors import cudasim_enabled
    from ai_economist.warp_drive.training.distributed import seed_offset

    device = torch.device(device)
    on_gpu = device.type == "cuda"
    backend = env_backend or run_config["trainer"].get("env_backend", "auto")
    if backend == "auto":
        backend = EnvBackend.PYCUDA if on_gpu else EnvBackend.NUMPY
    backend = EnvBackend.parse(backend)
    if backend is EnvBackend.CPU:
        backend = EnvBackend.NUMPY
    simulated = backend is EnvBackend.NUMBA and cudasim_enabled()
    if backend.is_gpu and not on_gpu and not simulated:
        raise ValueError(
            f"trainer.env_backend={backend.value!r} needs --device cuda (or "
            "NUMBA_ENABLE_CUDASIM=1 for numba); use 'numpy' on the CPU"
        )
    env = env_class(**run_config["env"])
    return EnvWrapper(
        env,
        num_envs=run_config["trainer"]["num_envs"],
        env_backend=backend,
        device=device if backend is not EnvBackend.NUMPY else None,
        seed=int(run_config["trainer"].get("seed", 0)) + seed_offset(device),
    )


class TrainingEnvironments(Mapping):
    """Name -> ``EnvEntry``; registration modules are imported on the first lookup."""

    def __init__(self, providers: tuple[str, ...] = ()) -> None:
        self._entries: dict[str, EnvEntry] = {}
        self._providers = list(providers)
        self._loading_defaults = False

    def _load(self) -> None:
        self._loading_defaults = True
        try:
            while self._providers:
                importlib.import_module(self._providers.pop(0))
        finally:
            self._loading_defaults = False

    def register(self, name: str, entry: EnvEntry) -> None:
        """Add (or replace) the entry ``name``; the built-in registration modules never
        replace an entry registered before they were imported (custom entries win)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"environment names must be non-empty strings, got {name!r}")
        if not isinstance(entry, EnvEntry):
            raise TypeError(f"register expects an EnvEntry, got {type(entry).__name__}")
        if self._loading_defaults and name in self._entries:
            return
        self._entries[name] = entry

    def __getitem__(self, name: str) -> EnvEntry:
        if name not in self._entries:
            self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(
                close_matches_message(name, self._entries, "training environment")
            ) from None

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load()
        return len(self._entries)


SCENARIO_REGISTRATION_MODULES: tuple[str, ...] = (
    "ai_economist.foundation.scenarios.covid19.registration",
    "ai_economist.foundation.scenarios.one_step_economy.registration",
    "ai_economist.foundation.scenarios.simple_wood_and_stone.registration",
)
"""Modules that register the Foundation scenarios' training entries (imported lazily)."""


def _default_providers() -> tuple[str, ...]:
    from ai_economist import example_envs

    return SCENARIO_REGISTRATION_MODULES + tuple(getattr(example_envs, "REGISTRATION_MODULES", ()))


ENVIRONMENTS = TrainingEnvironments(_default_providers())
ENVIRONMENTS.register("toy", EnvEntry(build_toy_env, "first", _toy_env_class, _one_toy_env))


def register_training_env(
    name: str,
    build: Builder,
    env_class: Callable[[], Callable] | None = None,
    obs_dim_corresponding_to_num_agents: str = "first",
    build_one: Callable[[dict], Any] | None = None,
    build_eval: Callable[[dict], tuple[Any, Any]] | None = None,
) -> None:
    """Make ``name`` trainable: ``build(run_config, device, env_backend)`` returns a
    ``BatchedPolicyEnv``; ``env_class()`` (optional) returns the constructor whose arguments
    the config's ``env`` block is checked against; ``build_one(env_block)`` (optional) builds
    one environment cheaply on the CPU so that its own value checks run before any work;
    ``build_eval(run_config)`` (optional) returns ``(one env on the CPU, the scenario object
    whose dense log ``evaluate`` writes)``, by default ``build`` with one env and no log."""
    entry = EnvEntry(build, obs_dim_corresponding_to_num_agents, env_class, build_one, build_eval)
    ENVIRONMENTS.register(name, entry)


def register_gpu_training_env(env_class: type, name: str | None = None) -> None:
    """Make the ``GpuEnvironment`` class ``env_class`` trainable under ``name`` (default
    ``env_class.name``) with ``EnvWrapper``."""
    name = name or env_class.name
    if not name:
        raise ValueError(f"{env_class.__name__} has no name; set the class attribute 'name'")

    def build(run_config: dict, device: Any, env_backend: str | None = None) -> Any:
        return build_gpu_env(env_class, run_config, device, env_backend)

    register_training_env(name, build, lambda: env_class, "first", lambda block: env_class(**block))


def get_training_env(name: str) -> EnvEntry:
    """The entry registered under ``name`` (``UnknownNameError`` with close matches)."""
    return ENVIRONMENTS[name]


def training_env_names() -> list[str]:
    """Every registered name, sorted."""
    return sorted(ENVIRONMENTS)
