"""Numba twins of the COVID-19 CUDA C kernels (``covid19_env_step.cu``, ``covid19_components_step.cu``).

``make_numba_kernels(constants)`` builds, once per constants dict, ``@cuda.jit`` kernels with
the SAME names as the CUDA C ones (so a backend launches both by one list of names):

* ``CudaControlUSStateOpenCloseStatusStep``, ``CudaFederalGovernmentSubsidyStep``,
  ``CudaVaccinationCampaignStep``, ``CudaCovidAndEconomySimulationStep``, ``CudaComputeReward``
  (the per-component step, launched in this order), and
* ``CudaCovidStepFused`` (the whole step in one launch, with CUDA C's fused memory schedule:
  ``covid19_numba_fused.py``).

The scenario's device functions and kernel bodies live in ``covid19_numba_scenario.py``.

Launch with ``[num_envs, num_agents + 1]``: one block per env, thread i < A is US state i, the
last thread is the planner.  Every kernel takes ALL declared arrays (``gpu_state``) by their C
names, in declaration order (the generic backend's ``numba_factory`` convention): the
parameter list is generated from the declaration, never kept by hand;
the kernels of ``FLAT_KERNELS`` take them flattened to 1-D (``array.reshape(-1)``).
Device functions carry the names of the numpy functions in ``dynamics.py`` and of the CUDA C
device functions; they close over the compile-time constants (frozen into the compiled code).

Time convention as in CUDA C: every kernel works on ``t = timestep[env] + 1`` and only the
last kernel of a step (``CudaComputeReward`` / ``CudaCovidStepFused``) commits ``timestep``
and ``done`` (the C names of ``_timestep_`` / ``_done_``) and, on the step that ends an
episode, records its metrics (``record_episode_end``).  Arithmetic is float32 as in CUDA C (the constants are ``np.float32`` values,
integers are cast with ``float32(...)``); only the per-component reward kernel adds the planner
sums in float64.
Planner sums over the states are deterministic as in CUDA C, but where CUDA C reduces with a
shared-memory tree the planner thread here adds the shared values in state order (one barrier
instead of six: each barrier costs ~0.1 s in the simulator).  The components' device functions
live in ``scenarios/covid19/components/covid19_components_numba.py``.
Under ``NUMBA_ENABLE_CUDASIM=1`` the same code runs in Numba's CUDA simulator on host arrays.
"""

from __future__ import annotations

import inspect

from ai_economist.foundation.scenarios.covid19.components.covid19_components_numba import (
    component_device_functions,
)
from ai_economist.foundation.scenarios.covid19.declaration.gpu_state import (
    FUSED_KERNEL,
    STEP_KERNELS,
    covid_state_fields,
)
from ai_economist.foundation.scenarios.covid19.kernels.covid19_numba_fused import (
    fused_device_functions,
)
from ai_economist.foundation.scenarios.covid19.kernels.covid19_numba_scenario import (
    scenario_device_functions,
)
from ai_economist.warp_drive.errors import cudasim_enabled, require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels


#: Kernel bodies each kernel calls, in order. The arrays a body takes are read from its own
#: signature (``body_arguments``) and must be declared fields: no list kept by hand.
_KERNEL_BODIES = {
    "CudaControlUSStateOpenCloseStatusStep": ("open_close_kernel_body",),
    "CudaFederalGovernmentSubsidyStep": ("subsidy_kernel_body",),
    "CudaVaccinationCampaignStep": ("vaccination_kernel_body",),
    "CudaCovidAndEconomySimulationStep": ("scenario_kernel_body",),
    "CudaComputeReward": ("reward_kernel_body", "record_episode_end", "commit_timestep"),
    FUSED_KERNEL: ("fused_step_body", "record_episode_end_flat", "commit_timestep"),
}
#: Kernels that take every declared array flattened to 1-D (C order, same memory): they index
#: with compile-time row lengths, as CUDA C does, instead of Numba's per-array runtime shapes.
FLAT_KERNELS = (FUSED_KERNEL,)
_CACHE: dict[tuple, dict] = {}


def parameter_names() -> list[str]:
    """The kernels' parameters: every declared field's C name, in declaration order."""
    return [f.cname for f in covid_state_fields()]


def body_arguments(functions: dict) -> dict[str, tuple[str, ...]]:
    """The declared arrays each kernel body takes, in its parameter order after ``env, tid,
    t``, read from the body's signature; a parameter that is not a declared field is an error."""
    declared = set(parameter_names())
    arguments = {}
    for body in dict.fromkeys(b for bodies in _KERNEL_BODIES.values() for b in bodies):
        fn = functions[body]
        names = list(inspect.signature(getattr(fn, "py_func", fn)).parameters)
        if names[:3] != ["env", "tid", "t"]:
            raise TypeError(
                f"Numba kernel body {body!r} must start with (env, tid, t), has {names}"
            )
        unknown = [n for n in names[3:] if n not in declared]
        if unknown:
            raise TypeError(
                f"Numba kernel body {body!r} takes {unknown}, which are not declared fields of "
                "gpu_state.covid_state_fields()"
            )
        arguments[body] = tuple(names[3:])
    return arguments


def kernel_source(name: str, arguments: dict[str, tuple[str, ...]]) -> str:
    """Python source of kernel ``name``: its signature is the declaration, its bodies get the
    arrays ``arguments`` (``body_arguments``) names."""
    lines = [
        f"def {name}({', '.join(parameter_names())}):",
        "    env = cuda.blockIdx.x",
        "    tid = cuda.threadIdx.x",
        "    t = timestep[env] + 1",
    ]
    for body in _KERNEL_BODIES[name]:
        lines.append(f"    {body}(env, tid, t, {', '.join(arguments[body])})")
    return "\n".join(lines) + "\n"


def make_numba_kernels(constants: dict[str, int | float]) -> dict:
    """``{kernel name: @cuda.jit kernel}`` for these compile-time constants (cached)."""
    key = tuple(sorted(constants.items()))
    if key not in _CACHE:
        functions = device_functions(constants)
        arguments = body_arguments(functions)
        namespace = {"cuda": cuda, **functions}
        kernels = {}
        for name in (*STEP_KERNELS, FUSED_KERNEL):
            source = kernel_source(name, arguments)
            exec(compile(source, f"<covid19_numba:{name}>", "exec"), namespace)
            kernels[name] = cuda.jit(**jit_options(name, constants))(namespace[name])
        _CACHE[key] = kernels
    return _CACHE[key]


def jit_options(name: str, constants: dict[str, int | float]) -> dict:
    """``cuda.jit`` options of kernel ``name``: with ``COVID_FUSED_TARGET_WARPS`` among the
    constants (the backend's ``kernel_defines``), the fused kernel gets launch bounds for that
    many warps per SM, like CUDA C's ``__launch_bounds__``; none in the simulator."""
    warps = int(constants.get("COVID_FUSED_TARGET_WARPS", 0))
    if name != FUSED_KERNEL or warps <= 0 or cudasim_enabled():
        return {}
    threads = int(constants["NUM_AGENTS"]) + 1
    return {"launch_bounds": (threads, max(1, warps // -(-threads // 32)))}


def device_functions(constants: dict[str, int | float]) -> dict:
    """Every device function and kernel body by name (components, scenario, fused step)."""
    c = dict(constants)
    functions = {**component_device_functions(c), **scenario_device_functions(c)}
    functions.update(fused_device_functions(c, functions))
    return functions
