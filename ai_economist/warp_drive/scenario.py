"""The contract a GPU-capable environment implements: declare once, step on any backend.

A ``GpuEnvironment`` subclass is everything a new environment costs, as in WarpDrive:

* **state**: ``state_fields()`` declares every array once (``StateField``: name, dtype, shape with
  symbolic dims from ``dims()``, ``per_env``, reset policy, doc).  Allocation, the generated C
  header, kernel parameter lists, Numba argument lists, device resets, ``state_dict`` and pulls
  are derived from it by generic code (``ai_economist.warp_drive.env_wrapper``).
* **policies**: ``policies()`` says which thread indices of an environment's block act with
  which policy (``PolicyGroup``).  The trainer-facing arrays of each policy follow one naming
  convention (see ``PolicyGroup``) and must be declared in ``state_fields()``.
* **initial state**: ``initial_state(num_envs, seed)`` returns the host values every
  environment starts from (and is reset to, field by field, according to its reset policy).
* **the truth**: ``reference_step(state)`` advances every environment by one step in numpy.
  The CUDA C and Numba kernels mirror it; the parity checker compares them field by field.
* **kernels**: ``kernels()`` names the CUDA C source, the step kernels launched in order each
  step (one block per environment, one thread per agent) and the Numba module with kernels of
  the same names and parameters.
* **metrics**: ``episode_metrics(pull)`` turns declared arrays into host floats.

Conventions shared by the reference step and the kernels:

* built-in per-env int32 fields ``_timestep_`` (steps taken in the current episode) and
  ``_done_`` (1 once the episode has ended) must be declared; a step increments ``_timestep_``
  and sets ``_done_`` to 1 when it reaches ``episode_length`` (or earlier, by the env's rules);
* a step never resets an environment: the wrapper resets done environments afterwards
  (``reset_only_done_envs``), from the snapshot of ``initial_state`` (reset ``"snapshot"``),
  to zeros (``"zeros"``) or not at all (``"none"``);
* kernels take the ``kernel_arg`` fields as parameters in declaration order (scalar constants,
  ``per_env=False`` with shape ``()``, by value), exactly ``StateSpec.c_parameter_list()``;
  or, with ``KernelSpec.state_struct``, one pointer to a generated struct of device pointers
  (CUDA C). Numba kernels name their parameters after the fields' C names (checked before a
  run); a ``KernelSpec.numba_factory`` may build them for the environment's constants.
* several kernels a step (``step_kernels``, launched in order), and more kernels launched by
  name (``other_kernels``); ``reset_kernels`` run after every reset (all envs or the done
  ones) for what a reset draws anew (e.g. seeded starting positions per episode): they act on
  every environment whose ``_timestep_`` is 0, idempotently, and ``reference_reset`` is their
  numpy twin; a step may do anything a step does, e.g. record episode metrics
  into declared fields with reset ``"none"`` on the step that ends an episode.

What the generic path derives (``ai_economist.warp_drive.codegen``, ``backends/``,
``env_wrapper.EnvWrapper``):

* the generated header ``"<env name>_state.h"`` (on nvcc's include path): every ``dims()``
  entry as an upper-case ``#define`` (``num_agents`` -> ``NUM_AGENTS``), the
  ``KernelSpec.defines``, and ``<PREFIX>_STATE_PARAMS``, the parameter list above as a macro
  (``<PREFIX>`` = the env name in upper case), so a kernel reads
  ``extern "C" __global__ void my_step(MY_ENV_STATE_PARAMS)``;
* backends ``numpy`` (``reference_step`` on host arrays that share memory with the trainer's
  CPU tensors), ``pycuda`` and ``numba`` (grid ``num_envs``, block ``threads_per_env``);
* checks before anything runs on a device (``checks/declaration.py``): the built-ins and every
  policy's four fields are declared with the right dtype and shape, ``initial_state`` fits
  ``num_envs``, at most 1,024 threads per environment, the step kernels exist and take the
  declared parameters; ``checks/parity.py`` compares a backend with the reference.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ai_economist.warp_drive.state import StateField, StateSpec

OBSERVATIONS = "observations_{tag}"
ACTION_MASK = "action_mask_{tag}"
SAMPLED_ACTIONS = "sampled_actions_{tag}"
REWARDS = "rewards_{tag}"


@dataclass(frozen=True)
class PolicyGroup:
    """The agents of one policy: ``num_agents`` consecutive threads from ``first_agent``.

    Per-env arrays of the group, declared in ``state_fields()`` under these names:

    * ``observations_<tag>``: float32 ``(num_agents, obs_dim)``;
    * ``action_mask_<tag>``: float32 ``(num_agents, num_actions)``, 1 = allowed;
    * ``sampled_actions_<tag>``: int32 ``(num_agents,)``, written by the trainer;
    * ``rewards_<tag>``: float32 ``(num_agents,)``, the last step's rewards.
    """

    tag: str
    first_agent: int
    num_agents: int
    obs_dim: int
    num_actions: int

    def field_name(self, pattern: str) -> str:
        """``pattern`` (e.g. ``OBSERVATIONS``) with this group's tag filled in."""
        return pattern.format(tag=self.tag)

    @property
    def agent_ids(self) -> list[str]:
        """Agent ids ``["<first_agent>", ...]`` (strings, as WarpDrive's policy maps)."""
        return [str(self.first_agent + i) for i in range(self.num_agents)]


def block_threads(name: str, needed: int, requested: int | None = None) -> int:
    """Threads of one environment's block: ``requested``, or ``needed`` rounded up to whole
    warps of 32; a ValueError naming ``name`` unless ``needed <= threads <= 1024``."""
    threads = -(-needed // 32) * 32 if requested is None else int(requested)
    if not needed <= threads <= 1024:
        raise ValueError(f"{name}: threads_per_env={threads}: needs {needed}..1024")
    return threads


@dataclass(frozen=True)
class KernelSpec:
    """Where an environment's kernels live.

    Attributes:
        step_kernels: kernel names launched in this order for one step.
        cuda_source: the ``.cu`` file (compiled with nvcc; the generated state header is on the
            include path as ``"<env name>_state.h"``), or ``None`` without a CUDA C step.
        numba_module: dotted module path (or a ``.py`` file path) holding ``@cuda.jit``
            kernels with the same names and parameters, or ``None`` without a Numba step.
        threads_per_env: threads of one environment's block; default ``num_agents``; at
            most 1,024.
        defines: extra constants for the CUDA C step, written into the generated header
            (``#ifndef``-guarded, so nvcc ``-D`` flags still win); a ``numba_factory`` gets
            them too.
        state_struct: CUDA C calling convention. ``None``: kernels take the ``kernel_arg``
            fields as parameters (``<PREFIX>_STATE_PARAMS``). A C type name (e.g.
            ``"MyEnvData"``): the header also defines ``struct <state_struct>`` with one
            pointer per ``kernel_arg`` field in declaration order, and every kernel takes one
            ``const <state_struct>* d``, a device table of pointers filled once (long
            parameter lists cost host time every launch; the table costs nothing).
        numba_factory: name of a function of ``numba_module`` that returns ``{kernel name:
            @cuda.jit kernel}`` for the constants ``dims`` + ``defines`` (for kernels that
            close over compile-time constants); ``None``: the module's own kernels.
        flat_kernels: Numba kernels that take every array flattened to 1-D (same memory, C
            order), to index with compile-time row lengths instead of runtime shapes.
        other_kernels: kernels loaded and bound besides ``step_kernels`` (e.g. another way to
            step), launched by name through the backend's ``launch(name)``.
        envs_per_block: CUDA C step kernels only: up to this many environments share a block
            of ``threads_per_env x k`` threads (``blockDim.y = k``; an env is
            ``blockIdx.x * blockDim.y + threadIdx.y``, its agent ``threadIdx.x``), with ``k``
            the largest divisor of ``num_envs`` not above it; more envs in flight when an
            env's block is small. The header defines ``ENVS_PER_BLOCK`` (the most), for
            shared arrays with one row per env. Barriers are block-wide, so every env of the
            block must reach each one. Numba kernels keep one env per block.
        reset_kernels: kernels launched in order after every reset of the kernel backends
            (``reset_all`` and ``reset_done``, after the declared fields were reset); each
            re-initialises every environment whose ``_timestep_`` is 0 and must give the same
            result when run twice (``GpuEnvironment.reference_reset`` is the numpy twin).
    """

    step_kernels: tuple[str, ...]
    cuda_source: Path | None = None
    numba_module: str | None = None
    threads_per_env: int | None = None
    defines: Mapping[str, int | float] = field(default_factory=dict)
    state_struct: str | None = None
    numba_factory: str | None = None
    flat_kernels: tuple[str, ...] = ()
    other_kernels: tuple[str, ...] = ()
    reset_kernels: tuple[str, ...] = ()
    envs_per_block: int = 1

    @property
    def all_kernels(self) -> tuple[str, ...]:
        """``step_kernels``, ``other_kernels`` then ``reset_kernels``, without repeats."""
        names = (*self.step_kernels, *self.other_kernels, *self.reset_kernels)
        return tuple(dict.fromkeys(names))


class GpuEnvironment(ABC):
    """Base class of environments that run on the generic path (see the module docstring).

    Subclasses set ``name`` (the registry name) and ``episode_length`` and ``num_agents``
    (threads per environment, every policy group included) in their constructor.
    """

    name: ClassVar[str] = ""
    #: ``initial_state`` returns ONE environment's per-env values (shape ``shape``, no
    #: ``num_envs`` axis), replicated on the device: every environment starts alike and the
    #: host never holds ``num_envs`` copies.
    replicated_initial_state: ClassVar[bool] = False
    episode_length: int
    num_agents: int

    # ------------------------------------------------------------ declaration
    @abstractmethod
    def dims(self) -> dict[str, int]:
        """Named sizes used in field shapes (``num_agents``, ``episode_length``, ...)."""

    @abstractmethod
    def state_fields(self) -> Sequence[StateField]:
        """Every array and constant of the environment, declared once."""

    @abstractmethod
    def policies(self) -> dict[str, PolicyGroup]:
        """Policy tag -> the agents that act with it."""

    @abstractmethod
    def kernels(self) -> KernelSpec:
        """The CUDA C and Numba step kernels."""

    # ------------------------------------------------------------ behaviour
    @abstractmethod
    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Host start values: per-env fields ``(num_envs, *shape)``, constants ``shape``.

        Fields left out start at zero; the built-ins ``_timestep_`` and ``_done_`` always do
        (do not return them). Environments may start differently (e.g. seeded positions).
        Observations and masks must be valid (the trainer reads them before the first step).
        """

    @abstractmethod
    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        """Advance every environment one step, in place (numpy; the truth the kernels mirror).

        ``state`` holds every declared field (per-env fields with a leading ``num_envs`` axis);
        the actions are in ``sampled_actions_<tag>``.
        """

    def reference_reset(self, state: dict[str, np.ndarray]) -> None:
        """After every reset: re-initialise, in place, every environment whose ``_timestep_``
        is 0 (the numpy twin of ``KernelSpec.reset_kernels``; default: nothing)."""
        return None

    def episode_metrics(self, pull: Callable[[str], np.ndarray]) -> dict[str, float]:
        """Host metrics of completed episodes; ``pull(name)`` returns a field's host copy."""
        return {}

    def parity_tolerances(self) -> dict[str, tuple[float, Any]]:
        """Per-field ``(rtol, atol)`` for ``check_parity`` where the defaults do not fit
        (e.g. a float64 reference against float32 kernels over long episodes); ``atol`` may
        be an array that broadcasts against one environment's slice of the field."""
        return {}

    # ------------------------------------------------------------ derived
    def state_spec(self) -> StateSpec:
        """The declared fields with every symbolic dimension resolved."""
        return StateSpec(self.state_fields()).resolve(self.dims())

    def config(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this environment (for checkpoints and logs)."""
        return {}
