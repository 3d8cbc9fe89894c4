"""COVID-19 declared through the generic GPU contract (``warp_drive.scenario.GpuEnvironment``).

``CovidGpuEnvironment`` hands the generic path what is COVID-specific and nothing else:

* the state declaration (``gpu_state.covid_state_fields``) and its dimensions;
* the policies ``"a"`` (the 51 states, threads ``0..50``) and ``"p"`` (the planner, thread 51);
* the kernels: ``covid19_build.cu`` (CUDA C, one ``const CovidData*`` pointer table:
  ``KernelSpec.state_struct``) and the Numba twins built for the scenario's compile-time
  constants (``kernels/covid19_numba.make_numba_kernels``: ``KernelSpec.numba_factory``);
  the fused kernel steps (default), or the five WarpDrive-style kernels in order;
* one env's reset values (``gpu_state.host_initial_values``), replicated on the device;
* the truth: ``reference_step`` steps the float64 batched model (``CovidSimulation``) from the
  declared (float32) arrays and writes the results back, and the per-field float32
  tolerances of ``tolerances.TOLERANCES`` for ``check_parity``;
* the episode metrics, recorded by the step that ends an episode.

Allocation, the generated header and pointer table, launches, device resets, ``state_dict``
and pulls are the generic backend's (``warp_drive/backends``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.foundation.scenarios.covid19.declaration.tolerances import (
    TOLERANCES,
    field_tolerance,
)
from ai_economist.foundation.scenarios.covid19.model.metrics import (
    EPISODE_METRIC_NAMES,
    episode_metric_values,
)
from ai_economist.foundation.scenarios.covid19.model.simulation import (
    CovidSimulation,
    real_world_subsidy_levels,
)
from ai_economist.warp_drive.scenario import GpuEnvironment, KernelSpec, PolicyGroup
from ai_economist.warp_drive.state import StateField

STATE_STRUCT = "CovidData"
NUMBA_FACTORY = "make_numba_kernels"


class CovidGpuEnvironment(GpuEnvironment):
    """The COVID-19 scenario on the generic GPU path (see the module docstring).

    Args:
        params, components: ``CovidParams`` and ``ComponentParams`` of the scenario.
        use_real_world_policies: replay the real stringency and subsidy policies.
        real_world_subsidy_levels: subsidy level per step; derived from the components when
            omitted in real-world-policy mode.
        fused_step: a step is the single fused kernel (fast) instead of the five
            per-component kernels; both are bound either way (``backend.launch(name)``).
        kernel_defines: extra compile-time constants, e.g. ``{"COVID_FUSED_TARGET_WARPS": 48}``
            (the fused kernel's occupancy, CUDA C and Numba).
    """

    name = "CovidAndEconomySimulation"
    replicated_initial_state = True

    def __init__(
        self,
        params,
        components,
        use_real_world_policies: bool = False,
        real_world_subsidy_levels: np.ndarray | None = None,
        fused_step: bool = True,
        kernel_defines: dict[str, int | float] | None = None,
    ) -> None:
        if use_real_world_policies and real_world_subsidy_levels is None:
            real_world_subsidy_levels = _derived_subsidy_levels(params, components)
        self.params, self.components = params, components
        self.use_real_world_policies = bool(use_real_world_policies)
        self.real_world_subsidy_levels = real_world_subsidy_levels
        self.fused_step = bool(fused_step)
        self.kernel_defines = dict(kernel_defines or {})
        self.template = CovidSimulation(
            params, components, 1, self.use_real_world_policies, real_world_subsidy_levels
        )
        self.layout = gpu_state.observation_layout(self.template)
        self.constants = gpu_state.compile_time_constants(
            params, components, self.layout, use_real_world_policies=self.use_real_world_policies
        )
        self.episode_length = int(params.episode_length)
        self.num_agents = int(params.num_agents) + 1  # threads: the states and the planner
        self._reference: dict[int, CovidSimulation] = {}

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        """The symbolic dimensions of ``gpu_state.covid_state_fields``."""
        return gpu_state.state_dims(self.params, self.components, self.layout)

    def state_fields(self) -> Sequence[StateField]:
        """Every device array, in declaration (= struct = Numba parameter) order."""
        return gpu_state.covid_state_fields()

    def policies(self) -> dict[str, PolicyGroup]:
        """``"a"``: the states (threads ``0..A-1``), ``"p"``: the planner (thread ``A``)."""
        d, a = self.dims(), int(self.params.num_agents)
        return {
            "a": PolicyGroup("a", 0, a, d["obs_dim_a"], d["num_actions_a"]),
            "p": PolicyGroup("p", a, 1, d["obs_dim_p"], d["num_actions_p"]),
        }

    def kernels(self) -> KernelSpec:
        """CUDA C (pointer table) and Numba (factory) kernels of the same names."""
        fused = (gpu_state.FUSED_KERNEL,)
        step, other = (fused, gpu_state.STEP_KERNELS)
        if not self.fused_step:
            step, other = other, step
        return KernelSpec(
            step_kernels=step,
            cuda_source=gpu_state.BUILD_SOURCE,
            numba_module=gpu_state.NUMBA_SOURCE,
            threads_per_env=self.num_agents,
            defines={**self.constants, **self.kernel_defines},
            state_struct=STATE_STRUCT,
            numba_factory=NUMBA_FACTORY,
            flat_kernels=fused,
            other_kernels=other,
        )

    # ------------------------------------------------------------ behaviour
    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """One env's reset values (every env starts from the real state of ``start_date``)."""
        return gpu_state.host_initial_values(self.template)

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        """One day of every env through the float64 ``CovidSimulation``, from and back into the
        declared arrays; the step that ends an episode records its metrics."""
        sim = self._reference_simulation(int(state["_done_"].shape[0]))
        load_simulation_arrays(sim, state)
        agent_rewards, planner_rewards = sim.step(
            state["sampled_actions_a"], state["sampled_actions_p"][:, 0]
        )
        store_simulation_arrays(sim, state)
        state["rewards_a"][...] = agent_rewards
        state["rewards_p"][:, 0] = planner_rewards
        ended = sim.timestep == self.episode_length
        if ended.any():
            values = episode_metric_values(
                sim.deaths[ended],
                sim.vaccinated[ended],
                sim.planner_health_index[ended],
                sim.planner_economic_index[ended],
                float(self.params.us_population),
            )
            state["episode_metrics"][ended] = np.stack(values, axis=-1)
            state["completed_episodes"][ended] += 1

    def _reference_simulation(self, num_envs: int) -> CovidSimulation:
        sim = self._reference.get(num_envs)
        if sim is None:
            sim = self._reference[num_envs] = CovidSimulation(
                self.params,
                self.components,
                num_envs,
                self.use_real_world_policies,
                self.real_world_subsidy_levels,
            )
        return sim

    def episode_metrics(self, pull: Callable[[str], np.ndarray]) -> dict[str, float]:
        """Mean metrics of the last finished episode of every env that finished one."""
        count = pull("completed_episodes")
        if not count.any():
            return {}
        values = pull("episode_metrics")[count > 0].astype(np.float64).mean(axis=0)
        return dict(zip(EPISODE_METRIC_NAMES, map(float, values)))

    def parity_tolerances(self) -> dict[str, tuple[float, Any]]:
        """``tolerances.TOLERANCES`` (float32 kernels against the float64 model), people
        counts scaled by each state's population."""
        population = self.params.population
        out = {name: field_tolerance(name, population) for name in TOLERANCES}
        out["episode_metrics"] = (1e-4, 5e-3)  # sums of people (thousands, %) and the indices
        for f in self.state_fields():  # any other float field: the default of ``tolerances``
            if f.per_env and f.dtype.kind == "f" and f.name not in out:
                out[f.name] = field_tolerance(f.name)
        return out

    def config(self) -> dict[str, Any]:
        """Mode flags (the parameters themselves come from the Foundation env's config)."""
        return {
            "use_real_world_policies": self.use_real_world_policies,
            "fused_step": self.fused_step,
        }


def load_simulation_arrays(sim: CovidSimulation, state: dict[str, np.ndarray]) -> None:
    """Set ``sim``'s per-env model state (and time) from declared arrays, in the simulation's
    dtypes and memory layouts (fresh arrays: the simulation caches by identity)."""
    for name in ("_timestep_", *(f.name for f in gpu_state.model_state_fields())):
        attr = gpu_state.simulation_attribute(name)
        current = getattr(sim, attr)
        restored = np.empty_like(current)  # same layout (the slot-major history)
        restored[...] = np.reshape(state[name], current.shape)
        setattr(sim, attr, restored)


def store_simulation_arrays(sim: CovidSimulation, state: dict[str, np.ndarray]) -> None:
    """Write ``sim``'s per-env state, observations, masks, time and done flags into the
    declared arrays (cast to their dtypes)."""
    for name, value in gpu_state.simulation_state(sim).items():
        target = state[name]
        target[...] = np.reshape(value, target.shape)


def _derived_subsidy_levels(params, components) -> np.ndarray:
    """Real-world subsidy levels from the component constants (max annual per person is
    recovered from the daily maximum of the first state)."""
    max_annual = float(components.max_daily_subsidy_per_state[0] * 365.0 / params.population[0])
    return real_world_subsidy_levels(
        params, components.num_subsidy_levels, components.subsidy_interval, max_annual
    )
