"""Declare an environment's GPU state once: allocation, kernel arguments and C signatures.

A ``StateSpec`` is an ordered list of ``StateField``s.  The same declaration

* allocates the arrays in a ``CUDADataManager`` (per-env fields replicated ``num_envs`` times,
  constants stored once, reset behaviour set per field),
* builds the kernel argument list in declaration order for pycuda (``np.uintp`` pointers),
  numba (device arrays, or numpy views under ``NUMBA_ENABLE_CUDASIM=1``) or torch, and
* emits the matching C parameter list, so tests can check a CUDA kernel's signature against it.

Scalar constants (shape ``()``, ``per_env=False``) are passed either as typed by-value kernel
arguments (``scalars="args"``) or as ``-D`` compile-time constants (``scalars="defines"``,
see ``StateSpec.defines``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from ai_economist.warp_drive.c_signature import (  # noqa: F401  (re-exported)
    check_kernel_signature,
    normalize_c_declaration,
    parse_kernel_parameters,
)
from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, DataFeed, close_matches_message
from ai_economist.warp_drive.errors import (
    UnknownNameError,
    cudasim_enabled,
    require_numba_cuda,
)

ResetMode = Literal["snapshot", "zeros", "none"]
Backend = Literal["pycuda", "numba", "torch"]
ScalarMode = Literal["args", "defines"]

C_TYPES: dict[np.dtype, str] = {
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.int32): "int",
    np.dtype(np.int64): "long long",
    np.dtype(np.int16): "short",
    np.dtype(np.int8): "signed char",
    np.dtype(np.uint8): "unsigned char",
    np.dtype(np.bool_): "bool",
}

_BINOPS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__}
_BINOPS[ast.FloorDiv] = int.__floordiv__


def _eval_dim(expr: str, dims: Mapping[str, int]) -> int:
    """Evaluate a symbolic dimension such as ``"num_agents"`` or ``"episode_length + 1"``."""

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in dims:
                raise UnknownNameError(close_matches_message(node.id, dims, "dimension"))
            return int(dims[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(f"Unsupported dimension expression {expr!r} (use names, ints, + - * //).")

    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"Invalid dimension expression {expr!r}: {exc}") from None
    return ev(tree)


@dataclass(frozen=True)
class StateField:
    """One named GPU array or scalar constant.

    Attributes:
        name: data-manager name (and default C parameter name).
        dtype: numpy dtype (one of ``C_TYPES``).
        shape: one environment's shape; ints or symbolic dims (``"num_agents"``,
            ``"episode_length + 1"``) resolved by ``StateSpec.resolve``. ``()`` is a scalar.
        per_env: one copy per environment (leading ``num_envs`` dim on the device) or a constant
            stored once. Constants are never reset.
        reset: ``"snapshot"`` restores the initial value for done envs, ``"zeros"`` zeroes it,
            ``"none"`` leaves it alone (scratch arrays).
        kernel_arg: include the field in ``kernel_args`` / ``c_declarations``.
        doc: free text.
        c_name: kernel parameter / ``-D`` name when it differs from ``name``.
    """

    name: str
    dtype: Any
    shape: tuple[int | str, ...] = ()
    per_env: bool = True
    reset: ResetMode = "snapshot"
    kernel_arg: bool = True
    doc: str = ""
    c_name: str | None = field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"StateField names must be non-empty strings, got {self.name!r}.")
        dtype = np.dtype(self.dtype)
        if dtype not in C_TYPES:
            raise TypeError(
                f"StateField {self.name!r}: dtype {dtype} has no kernel type; use one of "
                + ", ".join(str(d) for d in C_TYPES)
            )
        object.__setattr__(self, "dtype", dtype)
        shape = (
            self.shape
            if isinstance(self.shape, tuple)
            else ((self.shape,) if isinstance(self.shape, (int, str)) else tuple(self.shape))
        )
        object.__setattr__(self, "shape", shape)
        if self.reset not in ("snapshot", "zeros", "none"):
            raise ValueError(
                f"StateField {self.name!r}: reset must be 'snapshot', 'zeros' or 'none', "
                f"got {self.reset!r}."
            )
        if not self.per_env:
            if self.reset == "zeros":
                raise ValueError(
                    f"StateField {self.name!r}: constants (per_env=False) are never reset."
                )
            object.__setattr__(self, "reset", "none")
        cname = self.c_name or self.name
        if not re.fullmatch(r"[A-Za-z_]\w*", cname):
            raise ValueError(f"StateField {self.name!r}: {cname!r} is not a valid C identifier.")

    @property
    def cname(self) -> str:
        """The C parameter / define name."""
        return self.c_name or self.name

    @property
    def is_resolved(self) -> bool:
        """True when every dimension is an int."""
        return all(isinstance(d, (int, np.integer)) for d in self.shape)

    @property
    def is_scalar_constant(self) -> bool:
        """Shape ``()`` and ``per_env=False``: passed by value or as a ``-D`` constant."""
        return not self.per_env and self.shape == ()

    @property
    def c_type(self) -> str:
        """The C element type (``float``, ``int``, ...)."""
        return C_TYPES[self.dtype]

    def resolve(self, dims: Mapping[str, int]) -> StateField:
        """A copy with every symbolic dimension evaluated against ``dims``."""
        shape = tuple(
            d if isinstance(d, (int, np.integer)) else _eval_dim(d, dims) for d in self.shape
        )
        for d in shape:
            if d < 0:
                raise ValueError(f"StateField {self.name!r}: negative dimension in {shape}.")
        return replace(self, shape=tuple(int(d) for d in shape))

    def c_declaration(self) -> str:
        """``"float* x"``, ``"const float* k"`` (constant array) or ``"const int k"`` (scalar)."""
        if self.is_scalar_constant:
            return f"const {self.c_type} {self.cname}"
        const = "" if self.per_env else "const "
        return f"{const}{self.c_type}* {self.cname}"


def policy_io_fields(
    *groups: tuple[str, int | str, int | str, int | str], reset: ResetMode = "none"
) -> list[StateField]:
    """The arrays the trainer reads and writes for policy groups ``(tag, rows, obs_dim,
    num_actions)``, kind by kind (each kind for every group in turn, the order kernels take
    them): ``observations_<tag>`` and ``action_mask_<tag>`` (reset policy ``reset``), then
    ``sampled_actions_<tag>`` and ``rewards_<tag>`` (zeroed at resets)."""
    kinds = (
        ("observations", np.float32, reset, lambda rows, obs, acts: (rows, obs)),
        ("action_mask", np.float32, reset, lambda rows, obs, acts: (rows, acts)),
        ("sampled_actions", np.int32, "zeros", lambda rows, obs, acts: (rows,)),
        ("rewards", np.float32, "zeros", lambda rows, obs, acts: (rows,)),
    )
    return [
        StateField(f"{kind}_{tag}", dtype, shape(rows, obs, acts), reset=mode)
        for kind, dtype, mode, shape in kinds
        for tag, rows, obs, acts in groups
    ]


def _to_numpy_scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value
    if isinstance(value, bool):
        return np.int32(value)
    if isinstance(value, int):
        return np.int32(value)
    if isinstance(value, float):
        return np.float32(value)
    return value


def pycuda_arg(x: Any) -> Any:
    """Convert a kernel argument for pycuda: CUDA tensor -> ``np.uintp`` pointer, Python
    int/bool -> ``np.int32``, float -> ``np.float32``; numpy scalars pass through."""
    if isinstance(x, np.generic):
        return x
    if hasattr(x, "data_ptr") and hasattr(x, "is_cuda"):
        if not x.is_cuda:
            raise TypeError(
                f"pycuda kernels need CUDA tensors, got a tensor on {x.device}; create the data "
                "manager with device='cuda'."
            )
        if not x.is_contiguous():
            raise ValueError("pycuda kernel arguments must be contiguous tensors.")
        return np.uintp(x.data_ptr())
    if isinstance(x, np.ndarray):
        raise TypeError("pass device tensors (not numpy arrays) to pycuda kernels.")
    return _to_numpy_scalar(x)


def numba_arg(x: Any) -> Any:
    """Convert a kernel argument for numba: a torch tensor becomes a zero-copy numba device
    array (``numba.cuda.as_cuda_array``) or, under ``NUMBA_ENABLE_CUDASIM=1``, a numpy view of a
    CPU tensor. Other values pass through."""
    if hasattr(x, "data_ptr") and hasattr(x, "is_cuda"):
        if cudasim_enabled():
            if x.is_cuda:
                raise TypeError(
                    "NUMBA_ENABLE_CUDASIM=1 runs kernels on the CPU: create the data manager with "
                    "device='cpu' (got a CUDA tensor)."
                )
            return x.detach().numpy()
        if not x.is_cuda:
            raise TypeError(
                f"numba CUDA kernels need CUDA tensors, got a tensor on {x.device} (set "
                "NUMBA_ENABLE_CUDASIM=1 to run on CPU tensors in the simulator)."
            )
        return require_numba_cuda().as_cuda_array(x.detach())
    return x


_CONVERTERS = {"pycuda": pycuda_arg, "numba": numba_arg, "torch": _to_numpy_scalar}


class StateSpec:
    """An ordered, named collection of ``StateField``s."""

    def __init__(self, fields: Iterable[StateField]) -> None:
        self.fields: tuple[StateField, ...] = tuple(fields)
        seen: set[str] = set()
        for f in self.fields:
            if not isinstance(f, StateField):
                raise TypeError(f"StateSpec expects StateField objects, got {f!r}.")
            for key in {f.name, f.cname}:
                if key in seen:
                    raise ValueError(f"Duplicate StateField name {key!r}.")
                seen.add(key)

    def __iter__(self):
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def names(self) -> list[str]:
        """Field names in declaration order."""
        return [f.name for f in self.fields]

    def __getitem__(self, name: str) -> StateField:
        for f in self.fields:
            if f.name == name:
                return f
        raise UnknownNameError(close_matches_message(name, self.names, "state field"))

    def resolve(self, dims: Mapping[str, int]) -> StateSpec:
        """A spec whose symbolic dimensions are evaluated against ``dims``."""
        return StateSpec(f.resolve(dims) for f in self.fields)

    def _require_resolved(self) -> None:
        bad = [f"{f.name}{f.shape}" for f in self.fields if not f.is_resolved]
        if bad:
            raise ValueError(f"Unresolved dimensions in {', '.join(bad)}; call spec.resolve(dims).")

    def data_feed(self, host_initial: Mapping[str, Any], num_envs: int | None = None) -> DataFeed:
        """A ``DataFeed`` of initial values (missing fields are zeros).

        Args:
            host_initial: initial values by field name.
            num_envs: ``None``: per-env values are one environment's (replicated on the
                device); an int: per-env values are given for every environment, shape
                ``(num_envs, *shape)`` exactly, so environments may start differently.

        Fields named ``_done_`` / ``_timestep_`` refer to the data manager's built-ins: they are
        declared (for kernel arguments and signatures) but not pushed.
        """
        self._require_resolved()
        unknown = [k for k in host_initial if k not in self.names]
        if unknown:
            raise UnknownNameError(close_matches_message(unknown[0], self.names, "state field"))
        feed = DataFeed()
        for f in self.fields:
            if f.name in (DONE, TIMESTEP):
                if f.dtype != np.int32 or f.shape != () or not f.per_env or f.name in host_initial:
                    raise ValueError(
                        f"{f.name!r} is a built-in: declare it as int32, shape (), per_env=True, "
                        "and give it no initial value."
                    )
                continue
            batched = num_envs is not None and f.per_env
            shape = (int(num_envs), *f.shape) if batched else f.shape
            value = host_initial.get(f.name)
            if value is None:
                arr = np.zeros(shape, f.dtype)
            else:
                arr = np.asarray(value)
                if not np.can_cast(arr.dtype, f.dtype, casting="same_kind"):
                    raise TypeError(f"{f.name!r}: cannot store {arr.dtype} values as {f.dtype}.")
                if batched and arr.shape != shape:
                    raise ValueError(
                        f"{f.name!r}: initial value of shape {arr.shape} does not fit num_envs="
                        f"{num_envs}: expected (num_envs, *{f.shape}) = {shape}."
                    )
                try:
                    arr = np.broadcast_to(arr.astype(f.dtype), shape)
                except ValueError:
                    raise ValueError(
                        f"{f.name!r}: initial value of shape {np.shape(value)} does not match the "
                        f"declared shape {f.shape}."
                    ) from None
            if f.is_scalar_constant:
                feed.add_data(f.name, f.dtype.type(arr), per_env=False, downcast_64bit=False)
            elif f.per_env:
                feed.add_data(
                    f.name,
                    np.array(arr, order="C"),  # keeps 0-d arrays 0-d (ascontiguousarray would not)
                    save_copy_and_apply_at_reset=f.reset == "snapshot",
                    replicate_over_envs=not batched,
                    per_env=True,
                    reset_to_zero=f.reset == "zeros",
                    downcast_64bit=False,
                )
            else:
                feed.add_data(f.name, arr, per_env=False, downcast_64bit=False)
        return feed

    def allocate(
        self,
        data_manager,
        host_initial: Mapping[str, Any],
        num_envs: int | None = None,
        *,
        batched: bool = False,
    ) -> None:
        """Push every field into ``data_manager``.

        Args:
            data_manager: a ``CUDADataManager``.
            host_initial: initial values by field name; constants are stored once. Per-env
                fields: one environment's values replicated ``num_envs`` times, or with
                ``batched=True`` every environment's values, shape ``(num_envs, *shape)``.
            num_envs: must equal ``data_manager.num_envs`` when given.
            batched: per-env initial values are given per environment.
        """
        if num_envs is not None and int(num_envs) != data_manager.num_envs:
            raise ValueError(
                f"num_envs={num_envs} differs from the data manager's {data_manager.num_envs}."
            )
        feed = self.data_feed(host_initial, data_manager.num_envs if batched else None)
        data_manager.push_data_to_device(feed, torch_accessible=True)

    def kernel_fields(
        self, names: Iterable[str] | None = None, scalars: ScalarMode = "args"
    ) -> list[StateField]:
        """The fields passed to a kernel: ``names`` in the given order, or every ``kernel_arg``
        field in declaration order; with ``scalars="defines"`` scalar constants are left out."""
        if scalars not in ("args", "defines"):
            raise ValueError(f"scalars must be 'args' or 'defines', got {scalars!r}.")
        fields = (
            [self[n] for n in names] if names is not None else [f for f in self if f.kernel_arg]
        )
        if scalars == "defines":
            fields = [f for f in fields if not f.is_scalar_constant]
        return fields

    def kernel_args(
        self,
        data_manager,
        names: Iterable[str] | None = None,
        backend: Backend = "pycuda",
        scalars: ScalarMode = "args",
    ) -> list[Any]:
        """Kernel arguments in declaration order (or in the order of ``names``).

        Args:
            data_manager: the ``CUDADataManager`` the spec was allocated in.
            names: a subset / order of fields; default every ``kernel_arg`` field.
            backend: ``"pycuda"`` (``np.uintp`` pointers), ``"numba"`` (numba device arrays or
                simulator numpy views) or ``"torch"`` (the tensors themselves).
            scalars: ``"args"`` passes scalar constants as typed values; ``"defines"`` omits them.

        Pointers stay valid for the data manager's lifetime, so build the list once per run.
        """
        try:
            convert = _CONVERTERS[backend]
        except KeyError:
            raise ValueError(
                f"backend must be one of {sorted(_CONVERTERS)}, got {backend!r}."
            ) from None
        return [
            convert(data_manager.device_data(f.name)) for f in self.kernel_fields(names, scalars)
        ]

    def c_declarations(
        self, names: Iterable[str] | None = None, scalars: ScalarMode = "args"
    ) -> list[str]:
        """The C parameter declarations matching ``kernel_args`` (same selection and order)."""
        return [f.c_declaration() for f in self.kernel_fields(names, scalars)]

    def c_parameter_list(
        self, names: Iterable[str] | None = None, scalars: ScalarMode = "args", sep: str = ",\n    "
    ) -> str:
        """``c_declarations`` joined into a kernel parameter list."""
        return sep.join(self.c_declarations(names, scalars))

    def defines(self, values) -> dict[str, int | float]:
        """``-D`` constants ``{c_name: value}`` of every scalar constant.

        Args:
            values: a ``CUDADataManager`` (after ``allocate``) or a mapping of host values.
        """
        out: dict[str, int | float] = {}
        for f in self.fields:
            if not f.is_scalar_constant:
                continue
            v = values.scalar_value(f.name) if hasattr(values, "scalar_value") else values[f.name]
            v = f.dtype.type(v)
            out[f.cname] = float(v) if f.dtype.kind == "f" else int(v)
        return out
