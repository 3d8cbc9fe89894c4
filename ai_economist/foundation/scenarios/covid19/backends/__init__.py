"""The COVID-19 scenario's batched backends, one per ``EnvBackend``.

``CovidAndEconomyEnvironment.batched_backend`` calls :func:`build_batched_backend` (the generic
``warp_drive.backends.make_backend`` builds a ``GpuEnvironment``'s), so the generic
``FoundationEnvWrapper`` never names the scenario: ``cpu`` steps deep copies of the Python env,
``numpy`` the batched array model, ``pycuda`` and ``numba`` the kernels of ``kernels/``.
"""

from __future__ import annotations

from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend


def build_batched_backend(
    env: Any,
    env_backend: str | EnvBackend,
    num_envs: int,
    *,
    device: Any = None,
    fused_step: bool = True,
    source: Any = None,
) -> Any:
    """The backend stepping ``num_envs`` copies of the COVID-19 env ``env``.

    Args:
        env: a ``CovidAndEconomyEnvironment`` (its parameters and components are used).
        env_backend: an ``EnvBackend`` or its name.
        device: torch device of the GPU backends.
        fused_step: GPU backends step with the fused kernel.
        source: a registered kernel source replacing the built-in one (GPU backends).

    Raises:
        ValueError: ``use_real_world_data`` on another backend than ``cpu``.
    """
    backend = EnvBackend.parse(env_backend)
    if backend is EnvBackend.CPU:
        from ai_economist.foundation.scenarios.covid19.backends.cpu_backend import (
            CovidPythonBackend,
        )

        return CovidPythonBackend(env, num_envs)
    if env.use_real_world_data:
        raise ValueError(
            "use_real_world_data runs on env_backend='cpu' only (it replays data, no simulation)"
        )
    kwargs = dict(
        use_real_world_policies=env.use_real_world_policies,
        real_world_subsidy_levels=env.world.simulation.real_subsidy_levels,
    )
    if backend is EnvBackend.NUMPY:
        from ai_economist.foundation.scenarios.covid19.backends.cpu_backend import CovidNumpyBackend

        return CovidNumpyBackend(env.params, env.component_params(), num_envs, **kwargs)
    from ai_economist.foundation.scenarios.covid19.backends.gpu_backend import CovidGpuBackend

    return CovidGpuBackend(
        env.params,
        env.component_params(),
        num_envs,
        backend=backend,
        device=device,
        fused_step=fused_step,
        source=source,
        **kwargs,
    )
