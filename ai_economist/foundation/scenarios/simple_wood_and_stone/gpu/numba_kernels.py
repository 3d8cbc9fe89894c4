"""The Numba kernels of one GPU env share one parameter list (the declared fields, in
order): each module writes it once, on a device function ``body(mode, <fields>)`` that
branches on ``mode``, and :func:`field_kernel` makes each kernel from it."""

from __future__ import annotations

import inspect
from typing import Any

from numba import cuda

from ai_economist.warp_drive.errors import cudasim_enabled

RESET, STEP, ORDERS_STEP = 0, 1, 2  # the modes the bodies branch on


def field_kernel(name: str, body: Any, mode: int, max_registers: int | None = None) -> Any:
    """The ``@cuda.jit`` kernel ``name`` whose parameters are ``body``'s after ``mode`` (so
    the declaration check sees the fields' names) and which runs ``body(mode, ...)``.

    ``max_registers``: the register cap per thread that the linker gets (ptxas's
    ``-maxrregcount``; more blocks of an env each fit on a multiprocessor); ignored by the
    simulator."""
    params = ", ".join(list(inspect.signature(body.py_func).parameters)[1:])
    namespace = {"body": body}
    exec(f"def {name}({params}):\n    body({int(mode)}, {params})\n", namespace)  # noqa: S102
    if max_registers is None or cudasim_enabled():
        return cuda.jit(namespace[name])
    return cuda.jit(max_registers=int(max_registers))(namespace[name])
