"""Registers the COVID-19 and economy scenario for training and evaluation
(``training_script --env covid_and_economy_environment``): ``FoundationEnvWrapper`` over the
batched numpy model on the CPU, the CUDA C kernels on a GPU; and, through
:func:`register_gymnasium_ids` (called by ``import ai_economist.adapters.gymnasium``), its
Gymnasium id ``ai_economist/CovidPlanner-v0``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend, resolve_backend
from ai_economist.warp_drive.registry import EnvEntry, register_env

NAME = "covid_and_economy_environment"


BACKENDS = (EnvBackend.PYCUDA, EnvBackend.NUMBA, EnvBackend.NUMPY, EnvBackend.CPU)
"""``pycuda`` (CUDA C kernels), ``numba`` (Numba kernels), ``numpy`` (all envs batched in
arrays) and ``cpu`` (Python copies of the env, the original, slower CPU path); ``auto`` is
resolved by the registry's one rule (``pycuda`` on a GPU, ``numpy`` on the CPU)."""


def register_gymnasium_ids() -> None:
    """Register ``ai_economist/CovidPlanner-v0`` with Gymnasium (the adapters' hook; importing
    ``ai_economist.foundation.scenarios.covid19.adapters`` does the same)."""
    from ai_economist.foundation.scenarios.covid19.adapters import register_gymnasium_ids

    register_gymnasium_ids()


def build_env_wrapper(
    run_config: dict, device: Any, env_backend: EnvBackend | str | None = None
) -> Any:
    """The COVID-19 and economy environment, batched behind ``FoundationEnvWrapper`` on
    ``env_backend`` (one of :data:`BACKENDS`; ``None``: ``trainer.env_backend`` resolved by the
    registry's one rule, as ``training_script`` does)."""
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment

    if env_backend is None:
        requested = run_config["trainer"].get("env_backend", "auto")
        env_backend = resolve_backend(requested, BACKENDS, device)
    on_gpu = str(device).startswith("cuda")
    env = CovidAndEconomyEnvironment(**run_config["env"])
    kwargs = {"device": device} if on_gpu else {}
    return FoundationEnvWrapper(
        env, num_envs=run_config["trainer"]["num_envs"], env_backend=env_backend, **kwargs
    )


def _covid_env_class() -> Callable:
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment

    return CovidAndEconomyEnvironment


def build_covid_eval_env(config: dict) -> tuple[Any, Any]:
    """One COVID-19 env on the ``cpu`` backend (Python env), dense-logging every episode."""
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper

    kwargs = dict(config["env"])
    kwargs.setdefault("dense_log_frequency", 1)
    env = _covid_env_class()(**kwargs)
    return FoundationEnvWrapper(env, num_envs=1, env_backend=EnvBackend.CPU), env


def _one_covid_env(env_block: dict) -> Any:
    """One COVID-19 env (about 20 ms): runs every argument check of the scenario."""
    from ai_economist.datasets.covid19.loader import load_calibration
    from ai_economist.training.preflight import ENV_ERRORS
    from ai_economist.warp_drive.training.schema import ConfigError

    path = env_block.get("path_to_data_and_fitted_params", "")
    try:
        load_calibration(path)
    except ENV_ERRORS as exc:  # CalibrationError, or what a damaged file raises
        raise ConfigError(
            f"'env.path_to_data_and_fitted_params' = {path!r}: {exc} (expected \"\" for the "
            "packaged calibration, a calibration directory or a covid19_calibration.npz file)"
        ) from exc
    return _covid_env_class()(**env_block)


def covid_parity_case(backend: str, num_envs: int, seed: int) -> Any:
    """The parity hook (``EnvEntry.parity``): the GPU kernels of the published configuration
    against the float64 model (``backends.gpu_consistency.parity_case``)."""
    from ai_economist.foundation.scenarios.covid19.backends.gpu_consistency import parity_case

    return parity_case(backend, num_envs, seed)


register_env(
    NAME,
    EnvEntry(
        build_env_wrapper,
        "last",
        _covid_env_class,
        _one_covid_env,
        build_covid_eval_env,
        backends=BACKENDS,
        config_dir=Path(__file__).resolve().parent / "run_configs",
        parity=covid_parity_case,
    ),
)
