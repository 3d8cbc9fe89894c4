"""The Numba kernels of one GPU env share one parameter list (the declared fields, in
order): each module writes it once, on a device function ``body(mode, <fields>)`` that
branches on ``mode``, and :func:`field_kernel` makes each kernel from it.

:func:`shaped_field_kernel` makes the same kernel with every array's dimensions past the
first as compile-time constants (``warp_drive.numba_shapes``), for the shapes
:func:`declared_trailing_shapes` reads off the declaration: one build per distinct shapes.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numba import cuda

from ai_economist.warp_drive.errors import cudasim_enabled
from ai_economist.warp_drive.numba_shapes import shaped_kernel
from ai_economist.warp_drive.state import StateField

RESET, STEP, ORDERS_STEP = 0, 1, 2  # the modes the bodies branch on


def _jit_options(max_registers: int | None) -> dict[str, int]:
    """``cuda.jit`` options: the register cap, left out when none is asked or simulated."""
    if max_registers is None or cudasim_enabled():
        return {}
    return {"max_registers": int(max_registers)}


def field_kernel(name: str, body: Any, mode: int, max_registers: int | None = None) -> Any:
    """The ``@cuda.jit`` kernel ``name`` whose parameters are ``body``'s after ``mode`` (so
    the declaration check sees the fields' names) and which runs ``body(mode, ...)``.

    ``max_registers``: the register cap per thread that the linker gets (ptxas's
    ``-maxrregcount``; more blocks of an env each fit on a multiprocessor); ignored by the
    simulator."""
    params = ", ".join(list(inspect.signature(body.py_func).parameters)[1:])
    namespace = {"body": body}
    exec(f"def {name}({params}):\n    body({int(mode)}, {params})\n", namespace)  # noqa: S102
    options = _jit_options(max_registers)
    return cuda.jit(**options)(namespace[name]) if options else cuda.jit(namespace[name])


def shaped_field_kernel(name: str, body: Any, mode: int,
                        shapes: Mapping[str, tuple[int, ...]],
                        max_registers: int | None = None) -> Any:  # fmt: skip
    """:func:`field_kernel` with each array of ``shapes`` (parameter: ``shape[1:]``) seen by
    ``body`` with those dimensions as compile-time constants; a kernel for arrays of these
    shapes only (the function manager checks them when it binds or launches it)."""
    params = list(inspect.signature(body.py_func).parameters)[1:]
    return shaped_kernel(name, body, mode, params, shapes, **_jit_options(max_registers))


def declared_trailing_shapes(fields: Iterable[StateField],
                             constants: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:  # fmt: skip
    """``{C name: shape[1:]}`` of every ``kernel_arg`` array of two or more dimensions on
    the device (a per-env field's shape after its leading env dimension, a constant's
    after its first), with the symbolic dimensions from ``constants`` (the backend's
    ``kernel_constants``: the dims upper-cased, then the defines)."""
    dims = {k.lower(): int(v) for k, v in constants.items()
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool)}  # fmt: skip
    out = {}
    for f in fields:
        if not f.kernel_arg:
            continue
        shape = f.resolve(dims).shape
        device = (0, *shape) if f.per_env else shape
        if len(device) >= 2:
            out[f.cname] = tuple(int(d) for d in device[1:])
    return out
