"""GPU backends of the COVID-19 scenario: the generic ``KernelBackend`` plus what is COVID's.

``CovidGpuBackend`` is ``warp_drive.backends.gpu.KernelBackend`` stepping a
``CovidGpuEnvironment`` (``gpu_env.py``): allocation from the declaration, the generated
header with ``struct CovidData`` and its pointer table, prebound launches (one driver call a
kernel, no allocation or host synchronisation in ``step``/``reset_done``), the one-launch
reset of done envs, ``state_dict`` and pulls all come from the generic backend.  This class
adds the scenario's own API on top:

* ``step_fused()`` / ``step_per_component()``: the single ``CudaCovidStepFused`` launch, or
  the five WarpDrive-style kernels in order (``fused_step`` picks what ``step()`` does);
* simulator attribute names as aliases of the declared fields (``history``, ``timestep``,
  ``done``);
* ``set_parameter_modulations`` and ``load_simulation_state`` (a ``CovidSimulation`` copied in).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.foundation.scenarios.covid19.declaration.gpu_env import CovidGpuEnvironment
from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation
from ai_economist.warp_drive.backend_names import GPU_BACKENDS, EnvBackend
from ai_economist.warp_drive.backends.gpu import KernelBackend

STEP_KERNELS, FUSED_KERNEL = gpu_state.STEP_KERNELS, gpu_state.FUSED_KERNEL
#: Simulator attribute names (``CovidSimulation``) accepted for the declared fields.
ALIASES = {
    **{attr: name for name, attr in gpu_state.SIMULATION_ATTRIBUTES.items()},
    "done": "_done_",
}
NUMBA_SOURCE = gpu_state.NUMBA_SOURCE


class CovidGpuBackend(KernelBackend):
    """``num_envs`` COVID-19 environments stepped on a GPU (or Numba's CUDA simulator).

    Args:
        params, components: ``CovidParams`` and ``ComponentParams`` of the scenario.
        num_envs: environments (one CUDA block each).
        backend: ``"pycuda"`` (CUDA C kernels) or ``"numba"`` (Numba twins).
        use_real_world_policies: replay the real stringency and subsidy policies.
        real_world_subsidy_levels: subsidy level per step; derived from the components when
            omitted in real-world-policy mode.
        device: torch device; ``"cuda"`` by default, ``"cpu"`` under ``NUMBA_ENABLE_CUDASIM=1``.
        fused_step: let ``step()`` launch the single fused kernel instead of five.
        source: another kernel source (a .cu build file, or a Numba module).
        kernel_defines: extra compile-time constants, e.g. ``{"COVID_FUSED_TARGET_WARPS": 48}``
            to tune the fused kernel's occupancy (CUDA C; Numba's launch bounds too).
    """

    def __init__(
        self,
        params,
        components,
        num_envs: int,
        backend: str | EnvBackend = EnvBackend.PYCUDA,
        use_real_world_policies: bool = False,
        real_world_subsidy_levels: np.ndarray | None = None,
        device: Any = None,
        fused_step: bool = False,
        source: str | None = None,
        kernel_defines: dict[str, int | float] | None = None,
    ) -> None:
        env = CovidGpuEnvironment(
            params,
            components,
            use_real_world_policies,
            real_world_subsidy_levels,
            fused_step=fused_step,
            kernel_defines=kernel_defines,
        )
        self.params, self.components = params, components
        self.layout, self.constants = env.layout, env.constants
        self.num_agents, self.episode_length = int(params.num_agents), env.episode_length
        self.fused_step = env.fused_step
        self.use_real_world_policies = env.use_real_world_policies
        self.initial_values = env.initial_state(num_envs, None)  # one env, host
        super().__init__(env, num_envs, self._kernel_backend(backend), None, device, source)
        self.name = self.backend
        self.grid, self.block = self.num_envs, self.threads_per_env
        self._per_component = tuple(self._bound[name] for name in STEP_KERNELS)
        self._fused = self._bound[FUSED_KERNEL]

    @staticmethod
    def _kernel_backend(backend: str | EnvBackend) -> EnvBackend:
        return EnvBackend.parse(backend, GPU_BACKENDS)

    # ------------------------------------------------------------------ stepping
    def step_fused(self) -> None:
        """One step through the single fused kernel."""
        self._fused()

    def step_per_component(self) -> None:
        """One step through the five WarpDrive-style kernels, in order."""
        for launch in self._per_component:
            launch()

    # ------------------------------------------------------------------ data access
    def tensor(self, name: str):
        """The live torch tensor of a declared field (no copy); simulator names accepted."""
        return super().tensor(ALIASES.get(name, name))

    def pull(self, name: str) -> np.ndarray:
        """A host copy of a declared field; simulator names accepted."""
        return super().pull(ALIASES.get(name, name))

    def set_parameter_modulations(
        self, beta_intercept=None, beta_slope=None, unemployment=None, env_ids=None
    ) -> None:
        """Scale the infection-rate intercepts/slopes and the unemployment response per env
        (scalars or one value per selected env, all >= 0) until the next reset."""
        import torch

        for value, name in (
            (beta_intercept, "beta_intercept_modulation"),
            (beta_slope, "beta_slope_modulation"),
            (unemployment, "unemployment_modulation"),
        ):
            if value is None:
                continue
            v = np.asarray(value, dtype=np.float64)
            if not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
            target = self.tensor(name)
            if env_ids is None:
                if v.ndim == 0:
                    target.fill_(float(v))
                else:
                    target.copy_(torch.as_tensor(np.array(np.broadcast_to(v, target.shape))))
            else:
                ids = torch.as_tensor(np.asarray(env_ids, dtype=np.int64), device=target.device)
                src = torch.as_tensor(np.array(np.broadcast_to(v, ids.shape)), dtype=target.dtype)
                target[ids] = src.to(target.device)

    def load_simulation_state(self, sim: CovidSimulation) -> None:
        """Copy every per-env state field (observations, masks and time included) of a
        ``CovidSimulation`` with the same ``num_envs`` into the device arrays."""
        import torch

        if sim.num_envs != self.num_envs:
            raise ValueError(f"simulation has {sim.num_envs} envs, backend {self.num_envs}")
        for name, value in gpu_state.simulation_state(sim).items():
            field = self.spec[name]
            target = self.tensor(name)
            host = gpu_state.cast_to_field(field, np.reshape(value, tuple(target.shape)))
            target.copy_(torch.from_numpy(host).to(target.device))
