"""The training names of the one environment registry (:mod:`ai_economist.warp_drive.registry`).

Kept for the code that registers and looks up environments as before; every function here is
a thin entry point onto that registry. A ``GpuEnvironment`` class trains on the generic path
with one line (in a module named by an ``ai_economist.environments`` entry point)::

    register_gpu_training_env(MyEnv)            # then: training_script --env my_env
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ai_economist.moved_modules import deprecated_attributes
from ai_economist.warp_drive import registry
from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.registrar import build_gpu_env, register_gpu_training_env
from ai_economist.warp_drive.registry import (
    ENVIRONMENTS,
    HOST_BACKENDS,
    Builder,
    EnvEntry,
    default_policy_mapping,
)
from ai_economist.warp_drive.registry import Registry as TrainingEnvironments
from ai_economist.warp_drive.training.toy_registration import build_toy_env

__all__ = [
    "ENVIRONMENTS",
    "Builder",
    "EnvEntry",
    "TrainingEnvironments",
    "build_gpu_env",
    "build_toy_env",
    "get_training_env",
    "register_gpu_training_env",
    "register_training_env",
    "training_env_names",
]


def register_training_env(
    name: str,
    build: Builder,
    env_class: Callable[[], Callable] | None = None,
    obs_dim_corresponding_to_num_agents: str = "first",
    build_one: Callable[[dict], Any] | None = None,
    build_eval: Callable[[dict], tuple[Any, Any]] | None = None,
    *,
    backends: tuple[EnvBackend, ...] | Callable[[dict], tuple[EnvBackend, ...]] = HOST_BACKENDS,
    config_dir: str | Path | None = None,
    policy_mapping: Callable[[Any], dict[str, list[str]]] = default_policy_mapping,
) -> None:
    """Make ``name`` trainable (an ``EnvEntry`` in the one registry; see its attributes):
    ``build(run_config, device, env_backend)`` returns a ``BatchedPolicyEnv`` for the
    resolved ``env_backend``, one of ``backends``; ``env_class()`` (optional) returns the
    constructor the config's ``env`` block is checked against; ``build_one(env_block)``
    (optional) builds one environment cheaply on the CPU so that its own value checks run
    before any work; ``build_eval(run_config)`` (optional) returns ``(one env on the CPU, the
    scenario object whose dense log evaluate writes)``; ``config_dir`` holds its packaged run
    configs (``<name>.yaml`` is the one ``--env name`` loads)."""
    entry = EnvEntry(
        build,
        obs_dim_corresponding_to_num_agents,
        env_class,
        build_one,
        build_eval,
        backends=backends,
        policy_mapping=policy_mapping,
        config_dir=config_dir,
    )
    registry.ENVIRONMENTS.register(name, entry)


def get_training_env(name: str) -> EnvEntry:
    """The entry registered under ``name`` (``UnknownNameError`` with close matches)."""
    return registry.ENVIRONMENTS[name]


def training_env_names() -> list[str]:
    """Every registered name, sorted."""
    return sorted(registry.ENVIRONMENTS)


__getattr__ = deprecated_attributes(
    __name__,
    {
        "SCENARIO_REGISTRATION_MODULES": (
            "environments register through the entry-point group "
            f"{registry.ENTRY_POINT_GROUP!r} (ai_economist.warp_drive.registry)",
            lambda: tuple(
                ep.module for ep, _ in registry.entry_points_of(registry.ENTRY_POINT_GROUP)
            ),
        )
    },
)
