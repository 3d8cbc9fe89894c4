"""Checks of a ``GpuEnvironment``'s declaration, run before anything touches the device.

Every error is an ``EnvironmentDeclarationError`` whose message names the environment and
the field, policy or kernel at fault and what was expected.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.c_signature import (
    check_kernel_signature,
    normalize_c_declaration,
    parse_kernel_parameters,
)
from ai_economist.warp_drive.cuda_compile import collect_sources
from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, close_matches_message
from ai_economist.warp_drive.scenario import (
    ACTION_MASK,
    OBSERVATIONS,
    REWARDS,
    SAMPLED_ACTIONS,
    GpuEnvironment,
)
from ai_economist.warp_drive.state import StateSpec

MAX_THREADS_PER_BLOCK = 1024


class EnvironmentDeclarationError(ValueError):
    """An environment's declaration, initial state or kernels do not fit together."""


def _name(env: GpuEnvironment) -> str:
    return getattr(env, "name", "") or type(env).__name__


def _fail(env: GpuEnvironment, text: str) -> EnvironmentDeclarationError:
    return EnvironmentDeclarationError(f"environment {_name(env)!r}: {text}")


def threads_per_env(env: GpuEnvironment) -> int:
    """Threads of one environment's block (``KernelSpec.threads_per_env`` or ``num_agents``),
    checked against the 1,024 threads a CUDA block allows."""
    declared = env.kernels().threads_per_env
    threads = int(env.num_agents if declared is None else declared)
    if threads <= 0:
        raise _fail(env, f"threads_per_env must be positive, got {threads}")
    if threads > MAX_THREADS_PER_BLOCK:
        raise _fail(
            env,
            f"{threads} threads per environment (num_agents={env.num_agents}): more than 1,024 "
            "agents per environment: not supported by one block per env; use at most 1,024 "
            "agents, or let each thread handle several agents (KernelSpec.threads_per_env).",
        )
    return threads


def _expect_field(env, spec: StateSpec, name: str, dtype, shape: tuple, used_by: str) -> None:
    if name not in spec.names:
        raise _fail(
            env,
            f"{used_by} needs the per-env field {name!r} ({np.dtype(dtype)}, shape {shape}) but "
            "state_fields() does not declare it. "
            + close_matches_message(name, spec.names, "state field"),
        )
    f = spec[name]
    if not f.per_env or f.dtype != np.dtype(dtype) or tuple(f.shape) != tuple(shape):
        raise _fail(
            env,
            f"field {name!r} ({used_by}) is declared as {f.dtype} shape {f.shape} "
            f"per_env={f.per_env}; expected {np.dtype(dtype)} shape {shape} per_env=True",
        )


def check_declaration(env: GpuEnvironment, spec: StateSpec) -> None:
    """Built-in fields, policy groups and their trainer-facing fields."""
    for name in (TIMESTEP, DONE):
        _expect_field(env, spec, name, np.int32, (), "the generic path")
    threads_per_env(env)
    num_agents = int(env.num_agents)
    owners: dict[str, set[int]] = {}
    for tag, group in env.policies().items():
        used_by = f"policy {tag!r}"
        if group.tag != tag:
            raise _fail(env, f"policies() key {tag!r} holds a PolicyGroup tagged {group.tag!r}")
        end = group.first_agent + group.num_agents
        if group.first_agent < 0 or group.num_agents <= 0 or end > num_agents:
            raise _fail(
                env,
                f"{used_by} covers agents {group.first_agent}..{end - 1}, outside the "
                f"{num_agents} agents (num_agents) of an environment",
            )
        taken = [t for t, agents in owners.items() if agents & set(range(group.first_agent, end))]
        if taken:
            raise _fail(env, f"{used_by} shares agents with policy {taken[0]!r}")
        owners[tag] = set(range(group.first_agent, end))
        if group.num_actions < 1 or group.obs_dim < 1:
            raise _fail(env, f"{used_by} needs obs_dim >= 1 and num_actions >= 1")
        n = group.num_agents
        _expect_field(
            env, spec, group.field_name(OBSERVATIONS), np.float32, (n, group.obs_dim), used_by
        )
        _expect_field(
            env, spec, group.field_name(ACTION_MASK), np.float32, (n, group.num_actions), used_by
        )
        _expect_field(env, spec, group.field_name(SAMPLED_ACTIONS), np.int32, (n,), used_by)
        _expect_field(env, spec, group.field_name(REWARDS), np.float32, (n,), used_by)


def check_initial_state(
    env: GpuEnvironment, spec: StateSpec, values: Mapping[str, Any], num_envs: int
) -> None:
    """Every value names a declared field and has shape ``(num_envs, *shape)`` (per-env) or
    ``shape`` (constants, and every field with ``replicated_initial_state``)."""
    for name, value in values.items():
        if name not in spec.names:
            raise _fail(
                env,
                "initial_state() returned an undeclared field. "
                + close_matches_message(name, spec.names, "state field"),
            )
        if name in (DONE, TIMESTEP):
            raise _fail(env, f"initial_state() must not set the built-in {name!r} (it starts at 0)")
        f = spec[name]
        batched = f.per_env and not env.replicated_initial_state
        want = (num_envs, *f.shape) if batched else tuple(f.shape)
        got = np.shape(value)
        if got != want:
            what = f"(num_envs={num_envs}, *{f.shape})" if batched else "the declared shape"
            raise _fail(
                env,
                f"initial_state() field {name!r} has shape {got}; expected {what} = {want}",
            )
        if not np.can_cast(np.asarray(value).dtype, f.dtype, casting="same_kind"):
            raise _fail(env, f"initial_state() field {name!r}: cannot store "
                        f"{np.asarray(value).dtype} values as {f.dtype}")  # fmt: skip


def _kind(ks, kernel: str) -> str:
    return "step kernel" if kernel in ks.step_kernels else "kernel"


def cuda_source_text(source: Path, include_dirs: Sequence[Path] = ()) -> str:
    """The text of a ``.cu`` file and every project file it includes."""
    return "\n".join(p.read_text(errors="replace") for p in collect_sources(source, include_dirs))


def check_cuda_kernels(
    env: GpuEnvironment, spec: StateSpec, source: Path, header_dir: Path | None = None
) -> None:
    """Every step kernel is a ``__global__`` function of ``source`` whose parameters are the
    declared ``kernel_arg`` fields, in order (the ``<PREFIX>_STATE_PARAMS`` macro counts)."""
    source = Path(source)
    if not source.is_file():
        raise _fail(env, f"CUDA source {source} does not exist")
    text = cuda_source_text(source, [header_dir] if header_dir else [])
    text = codegen.expand_params_macro(text, _name(env), spec)
    # a __launch_bounds__(...) between "void" and the name is allowed
    declared = re.findall(
        r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(", text
    )
    ks = env.kernels()
    for kernel in ks.all_kernels:
        if kernel not in declared:
            raise _fail(
                env,
                f"{_kind(ks, kernel)} {kernel!r} is not a __global__ function of {source.name}. "
                + close_matches_message(kernel, declared, "CUDA kernel"),
            )
        try:
            if ks.state_struct is None:
                check_kernel_signature(text, kernel, spec)
            else:
                _check_struct_kernel(text, kernel, ks.state_struct)
        except ValueError as exc:
            raise _fail(env, f"{source.name}: {exc}") from None


def _check_struct_kernel(text: str, kernel: str, struct: str) -> None:
    """Kernel ``kernel`` takes exactly one ``const <struct>*`` (``KernelSpec.state_struct``)."""
    params = parse_kernel_parameters(text, kernel)
    types = [normalize_c_declaration(p, ignore_const=True).rsplit(" ", 1)[0] for p in params]
    if types != [f"{struct}*"]:
        raise ValueError(
            f"kernel {kernel} takes ({', '.join(params)}); with state_struct={struct!r} it must "
            f"take one 'const {struct}* d' (the pointer table)"
        )


def check_numba_kernels(env: GpuEnvironment, spec: StateSpec, module: Any) -> None:
    """Every kernel exists in the Numba module (or in what its ``numba_factory`` returned) and
    takes the declared ``kernel_arg`` fields' C names as parameters, in order."""
    expected = codegen.numba_parameter_names(spec)
    kernels = module if isinstance(module, Mapping) else vars(module)
    where = "the numba_factory's kernels" if isinstance(module, Mapping) else module.__name__
    for kernel in env.kernels().all_kernels:
        obj = kernels.get(kernel)
        func = getattr(obj, "py_func", None)
        if func is None:
            known = [n for n, o in kernels.items() if hasattr(o, "py_func")]
            raise _fail(
                env,
                f"{_kind(env.kernels(), kernel)} {kernel!r} is not a @cuda.jit kernel of {where}. "
                + close_matches_message(kernel, known, "numba kernel"),
            )
        params = list(inspect.signature(func).parameters)
        if params != expected:
            diff = [
                f"#{i}: kernel has {a!r}, declared {e!r}"
                for i, (a, e) in enumerate(zip(params, expected, strict=False))
                if a != e
            ]
            if len(params) != len(expected):
                diff.insert(0, f"{len(params)} parameters in the kernel, {len(expected)} declared")
            raise _fail(
                env,
                f"numba kernel {kernel!r} parameters do not match the declaration: "
                + "; ".join(diff[:5]),
            )
