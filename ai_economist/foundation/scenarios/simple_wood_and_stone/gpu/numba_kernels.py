"""The Numba kernels of one GPU env share one parameter list (the declared fields, in
order): each module writes it once, on a device function ``body(mode, <fields>)`` that
branches on ``mode``, and :func:`field_kernel` makes each kernel from it."""

from __future__ import annotations

import inspect
from typing import Any

from numba import cuda

RESET, STEP, ORDERS_STEP = 0, 1, 2  # the modes the bodies branch on


def field_kernel(name: str, body: Any, mode: int) -> Any:
    """The ``@cuda.jit`` kernel ``name`` whose parameters are ``body``'s after ``mode`` (so
    the declaration check sees the fields' names) and which runs ``body(mode, ...)``."""
    params = ", ".join(list(inspect.signature(body.py_func).parameters)[1:])
    namespace = {"body": body}
    exec(f"def {name}({params}):\n    body({int(mode)}, {params})\n", namespace)  # noqa: S102
    return cuda.jit(namespace[name])
