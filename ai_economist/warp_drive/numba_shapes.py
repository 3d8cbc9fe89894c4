"""Numba kernels whose array shapes past the first dimension are compile-time constants.

A Numba kernel takes every array with its shape as runtime values, and for a C-contiguous
array the element address is ``data + sum(i_k * prod(shape[k+1:]))`` computed from those
values: int64 multiplies of runtime shapes at every index, and every ``x.shape[k]`` a loop
bound LLVM cannot see (a CUDA C kernel has the dimensions as constants from its generated
header). :func:`fixed_shape` is the view ``x`` with ``shape[1:]`` (and the strides) replaced
by constants, the same memory, type and meaning; :func:`shaped_kernel` makes a kernel that
takes such a view of each of its arrays before it calls its body, so that after inlining
every shape past the first dimension and every index step is a constant. The first
dimension (the environments of a per-env field) stays a runtime value.

Such a kernel is only right for arrays of the shapes it was built for: it carries them
(:data:`SHAPES_ATTRIBUTE`) and :func:`check_fixed_shapes`, which the Numba function manager
calls when it binds or launches a kernel, raises naming the first array whose shape differs.
Under ``NUMBA_ENABLE_CUDASIM=1`` the view is the array itself after the same check.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ai_economist.warp_drive.errors import cudasim_enabled, require_numba_cuda

#: Attribute of a :func:`shaped_kernel`: ``{parameter: shape[1:]}`` it was built for.
SHAPES_ATTRIBUTE = "fixed_trailing_shapes"


def _mismatch(name: str, shape: tuple[int, ...], trailing: tuple[int, ...]) -> str:
    return (
        f"array {name!r} has shape {shape}; this kernel was built for shape "
        f"(n, {', '.join(map(str, trailing))}) (its dimensions are compile-time constants): "
        "build the kernel for these dimensions"
    )


def _simulated_view(trailing: tuple[int, ...], name: str) -> Any:
    """The simulator's view: the array itself once its ``shape[1:]`` is ``trailing``."""

    def view(arr: Any) -> Any:
        if tuple(arr.shape[1:]) != trailing:
            raise ValueError(_mismatch(name, tuple(arr.shape), trailing))
        return arr

    return view


def _compiled_view(trailing: tuple[int, ...], name: str) -> Any:
    """The ``@intrinsic`` view: a C-contiguous array of ``len(trailing) + 1`` dimensions with
    the same data, first dimension and item size, and ``shape[1:] = trailing`` as constants
    (strides and size as a C-contiguous array of that shape has them). Arrays of another
    layout are passed through unchanged (their addresses use their strides)."""
    from numba.cuda import types
    from numba.cuda.core.errors import TypingError
    from numba.cuda.extending import intrinsic
    from numba.cuda.np.arrayobj import make_array, populate_array

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        aryty = sig.args[0]
        src = make_array(aryty)(context, builder, value=args[0])
        if aryty.layout != "C":
            return src._getvalue()
        intp = context.get_value_type(types.intp)
        itemsize = context.get_abi_sizeof(context.get_data_type(aryty.dtype))
        steps = [itemsize]
        for d in reversed(trailing):
            steps.insert(0, steps[0] * d)
        lead = builder.extract_value(src.shape, 0)
        out = make_array(aryty)(context, builder)
        populate_array(
            out,
            data=src.data,
            shape=[lead, *(intp(d) for d in trailing)],
            strides=[intp(s) for s in steps],
            itemsize=src.itemsize,
            meminfo=src.meminfo,
            parent=src.parent,
        )
        return out._getvalue()

    @intrinsic
    def view(typingctx: Any, arr: Any) -> Any:
        if not isinstance(arr, types.Array) or arr.ndim != len(trailing) + 1:
            raise TypingError(
                f"array {name!r}: this kernel was built for a {len(trailing) + 1}-D array of "
                f"shape (n, {', '.join(map(str, trailing))}), got {arr}"
            )
        return arr(arr), codegen

    return view


@functools.cache
def fixed_shape(trailing: tuple[int, ...], name: str = "array") -> Any:
    """The device function ``view(x)``: ``x`` with ``shape[1:] == trailing`` as constants
    (see the module docstring); ``name`` is the array's name in errors."""
    trailing = tuple(int(d) for d in trailing)
    if cudasim_enabled():
        return _simulated_view(trailing, name)
    return _compiled_view(trailing, name)


def shaped_kernel_source(name: str, params: Sequence[str], mode: int,
                         shapes: Mapping[str, tuple[int, ...]]) -> str:  # fmt: skip
    """Python source of kernel ``name(params)``: every parameter of ``shapes`` rebound to its
    constant-shape view (``_view_<param>``), then ``body(mode, params)``."""
    lines = [f"def {name}({', '.join(params)}):"]
    lines += [f"    {p} = _view_{p}({p})" for p in params if p in shapes]
    lines.append(f"    body({int(mode)}, {', '.join(params)})")
    return "\n".join(lines) + "\n"


def shaped_kernel(name: str, body: Any, mode: int, params: Sequence[str],
                  shapes: Mapping[str, tuple[int, ...]], **jit_options: Any) -> Any:  # fmt: skip
    """The ``@cuda.jit`` kernel ``name(params)`` that runs ``body(mode, params)`` on views of
    its arrays with ``shape[1:] == shapes[param]`` as compile-time constants (parameters
    not in ``shapes``: scalars and 1-D arrays, passed as they are). The kernel carries
    ``shapes`` as :data:`SHAPES_ATTRIBUTE`, with ``params`` for :func:`check_fixed_shapes`."""
    cuda = require_numba_cuda()
    unknown = sorted(set(shapes) - set(params))
    if unknown:
        raise ValueError(f"kernel {name!r}: shapes for {unknown}, which are not its parameters")
    namespace: dict[str, Any] = {"body": body}
    for p in params:
        if p in shapes:
            namespace[f"_view_{p}"] = fixed_shape(tuple(shapes[p]), p)
    source = shaped_kernel_source(name, params, mode, shapes)
    exec(compile(source, f"<shaped_kernel:{name}>", "exec"), namespace)  # noqa: S102
    kernel = cuda.jit(**jit_options)(namespace[name]) if jit_options else cuda.jit(namespace[name])
    setattr(kernel, SHAPES_ATTRIBUTE, (tuple(params), dict(shapes)))
    return kernel


def check_fixed_shapes(name: str, kernel: Any, args: Sequence[Any]) -> None:
    """A ValueError naming kernel ``name``'s first array argument whose ``shape[1:]`` is not
    the one the kernel was built for (nothing for kernels of runtime shapes)."""
    fixed = getattr(kernel, SHAPES_ATTRIBUTE, None)
    if fixed is None:
        return
    params, shapes = fixed
    if len(args) != len(params):
        raise ValueError(f"kernel {name!r} takes {len(params)} arguments, got {len(args)}")
    for param, arg in zip(params, args):
        trailing = shapes.get(param)
        if trailing is not None and tuple(arg.shape[1:]) != tuple(trailing):
            raise ValueError(f"kernel {name!r}: " + _mismatch(param, tuple(arg.shape), trailing))
