"""GPU backends of the COVID-19 scenario: CUDA C through pycuda, or the Numba twins.

``CovidGpuBackend`` allocates the declared state (``gpu_state.covid_state_fields``) in a
``CUDADataManager`` from one env's reset values (``host_initial_values``: a
``CovidSimulation(num_envs=1)`` reset on the host, replicated on the device), compiles/loads
the kernels once and then steps every env on the device:

* ``step()``: the WarpDrive-style per-component launches (open/close, subsidy, vaccination,
  scenario, reward), or with ``fused_step=True`` the single ``CudaCovidStepFused`` launch;
* ``reset_all()`` / ``reset_done()``: device resets from the snapshots (all envs / done envs).

Nothing in ``step()`` allocates or synchronises with the host: kernel arguments (one pointer
table for CUDA C, the declared arrays for Numba) are prepared once.  Launches go to the
default (legacy) CUDA stream, the one torch uses unless told otherwise.
"""

from __future__ import annotations

import functools

import numpy as np

from ai_economist.foundation.scenarios.covid19 import gpu_codegen, gpu_state
from ai_economist.foundation.scenarios.covid19.metrics import episode_metric_values
from ai_economist.foundation.scenarios.covid19.simulation import (
    CovidSimulation,
    real_world_subsidy_levels,
)
from ai_economist.warp_drive.backend_names import GPU_BACKENDS, EnvBackend
from ai_economist.warp_drive.data_manager import CUDADataManager
from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset
from ai_economist.warp_drive.env_state import check_keys, checked_array
from ai_economist.warp_drive.errors import cudasim_enabled

STEP_KERNELS, FUSED_KERNEL = gpu_state.STEP_KERNELS, gpu_state.FUSED_KERNEL
RESET_KERNEL = gpu_state.RESET_KERNEL
#: Simulator attribute names (``CovidSimulation``) accepted for the declared fields.
ALIASES = {
    **{attr: name for name, attr in gpu_state.SIMULATION_ATTRIBUTES.items()},
    "done": "_done_",
}


NUMBA_SOURCE = gpu_codegen.NUMBA_SOURCE


class CovidGpuBackend:
    """``num_envs`` COVID-19 environments stepped on a GPU (or Numba's CUDA simulator).

    Args:
        params, components: ``CovidParams`` and ``ComponentParams`` of the scenario.
        num_envs: environments (one CUDA block each).
        backend: ``"pycuda"`` (CUDA C kernels) or ``"numba"`` (Numba twins).
        use_real_world_policies: replay the real stringency and subsidy policies.
        real_world_subsidy_levels: subsidy level per step (``real_world_subsidy_levels``); derived
            from the components when omitted in real-world-policy mode.
        device: torch device; ``"cuda"`` by default, ``"cpu"`` under ``NUMBA_ENABLE_CUDASIM=1``.
        fused_step: let ``step()`` launch the single fused kernel instead of five.
        source: another kernel source (a .cu build file, or a Numba module).
        kernel_defines: extra ``-D`` defines for nvcc (pycuda), e.g.
            ``{"COVID_FUSED_TARGET_WARPS": 48}`` to tune the fused kernel's occupancy; Numba
            reads ``COVID_FUSED_TARGET_WARPS`` too (launch bounds of its fused kernel).
    """

    BACKENDS: tuple[EnvBackend, ...] = GPU_BACKENDS

    def __init__(
        self,
        params,
        components,
        num_envs: int,
        backend: str | EnvBackend = EnvBackend.PYCUDA,
        use_real_world_policies: bool = False,
        real_world_subsidy_levels: np.ndarray | None = None,
        device=None,
        fused_step: bool = False,
        source: str | None = None,
        kernel_defines: dict[str, int | float] | None = None,
    ) -> None:
        if backend not in self.BACKENDS:  # subclasses (test emulations) may add their own
            allowed = ", ".join(repr(str(b)) for b in self.BACKENDS)
            raise ValueError(f"backend must be one of {allowed}, got {backend!r}")
        if backend in GPU_BACKENDS:
            backend = EnvBackend.parse(backend)
        if use_real_world_policies and real_world_subsidy_levels is None:
            real_world_subsidy_levels = _derived_subsidy_levels(params, components)
        self.name = self.backend = backend
        self.params, self.components = params, components
        self.num_envs, self.num_agents = int(num_envs), params.num_agents
        self.episode_length = params.episode_length
        self.use_real_world_policies = bool(use_real_world_policies)
        self.fused_step = bool(fused_step)
        # Kernel source: a .cu build file (pycuda) or a module with make_numba_kernels (numba).
        self.source = source
        self.kernel_defines = dict(kernel_defines or {})
        template = CovidSimulation(
            params, components, 1, use_real_world_policies, real_world_subsidy_levels
        )
        self.layout = gpu_state.observation_layout(template)
        self.constants = gpu_state.compile_time_constants(
            params, components, self.layout, use_real_world_policies=use_real_world_policies
        )
        self.spec = gpu_state.covid_state_spec(params, components, self.layout)
        if device is None:
            device = "cpu" if backend is EnvBackend.NUMBA and cudasim_enabled() else "cuda"
        self.data_manager = CUDADataManager(
            num_agents=self.num_agents + 1,
            episode_length=self.episode_length,
            num_envs=self.num_envs,
            device=device,
        )
        self.initial_values = gpu_state.host_initial_values(template)  # one env, host
        gpu_state.allocatable_spec(self.spec).allocate(self.data_manager, self.initial_values)
        self.resetter = CUDAEnvironmentReset(self.data_manager)
        self.function_manager = None
        self.grid, self.block = self.num_envs, self.num_agents + 1
        self._setup_kernels()
        self._per_component = tuple(self._launch[name] for name in STEP_KERNELS)
        self._fused = self._launch[FUSED_KERNEL]

    # ------------------------------------------------------------------ setup
    def _setup_kernels(self) -> None:
        """Compile/load the kernels and fill ``_launch`` (name -> zero-argument launcher),
        ``_reset_done_launch`` and ``_reset_all_launch``."""
        if self.backend is EnvBackend.PYCUDA:
            self._setup_pycuda()
        else:
            self._setup_numba()

    def _setup_pycuda(self) -> None:
        from ai_economist.warp_drive.function_manager import CUDAFunctionManager

        header = gpu_codegen.generate_header(self.spec, self.constants)
        self.header_dir = gpu_codegen.write_header(header)
        fm = CUDAFunctionManager(num_agents=self.block, num_envs=self.num_envs)
        fm.compile_and_load_cuda(
            self.source or gpu_codegen.BUILD_SOURCE,
            defines=self.kernel_defines,
            include_dirs=[self.header_dir],
        )
        self.function_manager = fm
        dm = self.data_manager
        self._table = gpu_codegen.pointer_table(dm, self.spec)
        self._snapshot_table = gpu_codegen.pointer_table(dm, self.spec, snapshots=True)
        table = np.uintp(self._table.data_ptr())
        snap = np.uintp(self._snapshot_table.data_ptr())
        grid, block = (self.grid, 1, 1), (self.block, 1, 1)

        def bind(name: str, *args):  # driver launches on torch's stream (graph-capturable)
            return fm.bind(name, *args, grid=grid, block=block)

        self._launch = {name: bind(name, table) for name in (*STEP_KERNELS, FUSED_KERNEL)}
        self._reset_done_launch = bind(RESET_KERNEL, table, snap, np.int32(0))
        self._reset_all_launch = bind(RESET_KERNEL, table, snap, np.int32(1))

    def _setup_numba(self) -> None:
        import importlib

        from ai_economist.warp_drive.numba_launch import bind_numba_launch
        from ai_economist.warp_drive.state import numba_arg

        module = importlib.import_module(self.source or NUMBA_SOURCE)
        kernels = module.make_numba_kernels({**self.constants, **self.kernel_defines})
        self._numba_kernels = kernels
        args = tuple(numba_arg(self.tensor(f.name)) for f in self.spec)
        flat = tuple(numba_arg(self.tensor(f.name).reshape(-1)) for f in self.spec)
        flat_kernels = getattr(module, "FLAT_KERNELS", ())  # take 1-D views of every array
        self._numba_args = args
        self._launch = {  # argument buffers packed once: one driver call a launch
            name: bind_numba_launch(
                kernel, flat if name in flat_kernels else args, self.grid, self.block
            )
            for name, kernel in kernels.items()
        }
        self._reset_done_launch = self._numba_reset_done
        self._reset_all_launch = functools.partial(
            self.resetter.reset_when_done, self.data_manager, "force_reset"
        )

    # ------------------------------------------------------------------ stepping
    def step(self) -> None:
        """Advance every env by one day with the actions in ``sampled_actions_a/p``.

        An env past its last day keeps stepping (time beyond ``episode_length``, the
        real-policy tables clamped to their last row) until ``reset_done()`` resets it.
        """
        if self.fused_step:
            self._fused()
        else:
            for launch in self._per_component:
                launch()

    def step_fused(self) -> None:
        """One step through the single fused kernel."""
        self._fused()

    def step_per_component(self) -> None:
        """One step through the five WarpDrive-style kernels, in order."""
        for launch in self._per_component:
            launch()

    def launch(self, name: str) -> None:
        """Launch one kernel by name (for tests and WarpDrive-style callers)."""
        self._launch[name]()

    def reset_all(self) -> None:
        """Every env back to its reset state (device copy from the snapshots)."""
        self._reset_all_launch()

    def reset_done(self) -> None:
        """Reset (on the device) only the envs whose ``_done_`` flag is set, recording their
        end-of-episode metrics first."""
        self._reset_done_launch()

    def _numba_reset_done(self) -> None:
        t = self.tensor
        done = t("_done_") != 0
        metrics = self._metric_values()
        t("episode_metrics").copy_(torch_where(done[:, None], metrics, t("episode_metrics")))
        t("completed_episodes").add_(done.to(t("completed_episodes").dtype))
        self.resetter.reset_when_done(self.data_manager, "if_done")

    def _metric_values(self):
        import torch

        t = self.tensor
        values = episode_metric_values(
            t("deaths"),
            t("vaccinated"),
            t("planner_health_index"),
            t("planner_economic_index"),
            float(self.constants["US_POPULATION"]),
        )
        return torch.stack(values, dim=-1)

    # ------------------------------------------------------------------ data access
    def tensor(self, name: str):
        """The live torch tensor of a declared field (no copy)."""
        return self.data_manager.data_on_device_via_torch(ALIASES.get(name, name))

    def pull(self, name: str) -> np.ndarray:
        """A host copy of a declared field."""
        return self.data_manager.pull_data_from_device(ALIASES.get(name, name))

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

    def state_dict(self) -> dict:
        """Host copies of every declared per-env field (model state, trainer buffers, time,
        done flags, episode bookkeeping).  Constants and reset snapshots are rebuilt from the
        parameters when the backend is built and are not included."""
        names = [f.name for f in self.spec if f.per_env]
        return {"arrays": {name: self.data_manager.pull_data_from_device(name) for name in names}}

    def load_state_dict(self, state: dict) -> None:
        """Copy a :meth:`state_dict` back into the device arrays, in place (the kernels' argument
        tables keep pointing at them); raises ``EnvStateMismatch`` for a state that does not fit."""
        import torch

        check_keys(f"{self.backend} backend", state, ("arrays",))
        fields = [f for f in self.spec if f.per_env]
        check_keys(f"{self.backend} backend arrays", state["arrays"], [f.name for f in fields])
        dm = self.data_manager
        host = {}
        for f in fields:  # check everything before changing anything
            name = f.name
            host[name] = checked_array(
                f"arrays/{name}", state["arrays"][name], dm.get_shape(name), dm.get_dtype(name)
            )
        for name, value in host.items():
            target = dm.data_on_device_via_torch(name)
            target.copy_(torch.from_numpy(np.array(value, order="C")).to(target.device))

    def episode_metrics(self) -> dict[str, float]:
        """Mean end-of-episode metrics of the last finished episode of each env (host sync)."""
        count = self.pull("completed_episodes")
        if not count.any():
            return {}
        values = self.pull("episode_metrics")[count > 0].astype(np.float64).mean(axis=0)
        return dict(zip(gpu_state.EPISODE_METRIC_NAMES, map(float, values)))

    def memory_bytes(self) -> int:
        """Device bytes held by the data manager (snapshots included)."""
        return self.data_manager.memory_bytes()


def torch_where(cond, a, b):
    import torch

    return torch.where(cond, a, b)


def _derived_subsidy_levels(params, components) -> np.ndarray:
    """Real-world subsidy levels from the component constants (max annual per person is
    recovered from the daily maximum of the first state)."""
    max_annual = float(components.max_daily_subsidy_per_state[0] * 365.0 / params.population[0])
    return real_world_subsidy_levels(
        params, components.num_subsidy_levels, components.subsidy_interval, max_annual
    )
