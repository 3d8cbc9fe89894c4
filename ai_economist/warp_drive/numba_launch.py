"""Numba kernel launches whose argument buffer is built once.

A Numba ``kernel[grid, block](*args)`` call types every argument, converts every array into its
ABI form (meminfo, parent, size, itemsize, data pointer, shape, strides) and packs the lot for
the driver on every launch: with the 60 array arguments of a fused environment step that is
hundreds of kernel parameters and a few hundred microseconds of host time a step.  In a
training loop the arguments never change (the same device arrays every step), so
:func:`bind_numba_launch` does that work once, keeps the packed parameters alive and launches
with one ``cuLaunchKernel`` call afterwards.

Under ``NUMBA_ENABLE_CUDASIM=1`` (no driver) and whenever the prepared path cannot be set up
(another numba-cuda layout), the launcher falls back to the ordinary Numba call, so results
never depend on the path; :attr:`PreparedLaunch.prepared` says which one is in use.
"""

from __future__ import annotations

import ctypes
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ai_economist.warp_drive.driver_launch import current_stream_handle
from ai_economist.warp_drive.errors import cudasim_enabled


def _torch_device_index() -> int | None:
    """torch's current CUDA device when torch's CUDA is in use (the launches' device)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return None
    return torch.cuda.current_device()


def _as_dim3(dim: int | Sequence[int]) -> tuple[int, int, int]:
    dims = (int(dim),) if isinstance(dim, int) else tuple(int(d) for d in dim)
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise ValueError(f"launch dimensions must be 1 to 3 positive ints, got {dim!r}")
    return (*dims, 1, 1)[:3]  # type: ignore[return-value]


def _holder(value: Any) -> Any:
    """A ctypes object holding one kernel parameter as Numba's launcher would pass it."""
    if isinstance(value, ctypes._SimpleCData):
        return value
    if isinstance(value, bool):
        return ctypes.c_bool(value)
    if isinstance(value, int):  # ABI words (sizes, pointers, shapes, strides): intptr_t
        return ctypes.c_ssize_t(value)
    raise TypeError(f"unsupported prepared kernel parameter {value!r}")


class PreparedLaunch:
    """A zero-argument launcher of one Numba kernel with fixed arguments.

    Args:
        dispatcher: a ``numba.cuda.jit`` kernel (dispatcher).
        args: its arguments (numba device arrays or arrays exposing ``__cuda_array_interface__``,
            and scalars); they must stay alive and in place as long as the launcher is used.
        grid, block: launch dimensions.
        stream: a CUDA stream handle (int), or 0 (the default): torch's current stream at
            every launch (its default stream outside a CUDA graph capture).
    """

    def __init__(
        self,
        dispatcher: Any,
        args: Sequence[Any],
        grid: int | Sequence[int],
        block: int | Sequence[int],
        stream: int = 0,
    ) -> None:
        self.grid, self.block = _as_dim3(grid), _as_dim3(block)
        self._args = tuple(args)
        with warnings.catch_warnings():  # small grids (tests) warn of low occupancy: not news
            warnings.simplefilter("ignore", category=Warning)
            self._fallback = dispatcher[self.grid, self.block]
        self.prepared = False
        self.reason = "NUMBA_ENABLE_CUDASIM=1" if cudasim_enabled() else ""
        if not cudasim_enabled():
            try:
                self._prepare(dispatcher, int(stream))
                self.prepared = True
            except Exception as exc:  # any numba-cuda internals that differ: keep the safe path
                self.reason = f"{type(exc).__name__}: {exc}"
                warnings.warn(
                    f"prepared Numba launch unavailable ({self.reason}); using Numba's launcher",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def _prepare(self, dispatcher: Any, stream: int) -> None:
        from cuda.bindings import driver as cu

        argtypes = tuple(dispatcher.typeof_pyval(a) for a in self._args)
        kernel = dispatcher.compile(argtypes)
        packed: list[Any] = []
        writeback: list[Any] = []
        for ty, value in zip(kernel.argument_types, self._args):
            kernel._prepare_args(ty, value, 0, writeback, packed)
        if writeback:
            raise TypeError("host arrays in the arguments (pass device arrays)")
        self._holders = [_holder(v) for v in packed]
        self._params = (ctypes.c_void_p * max(1, len(self._holders)))(
            *[ctypes.addressof(h) for h in self._holders]
        )
        handle = kernel._codelibrary.get_cufunc().handle
        self._function = cu.CUfunction(int(handle))
        self._fixed_stream = int(stream)
        self._device = _torch_device_index()
        self._streams: dict[int, Any] = {}
        self._driver = cu

    def _stream(self) -> Any:
        """The stream of this launch: the one given, else torch's current stream (so that a
        CUDA graph capture records the launch)."""
        handle = self._fixed_stream or current_stream_handle(self._device)
        stream = self._streams.get(handle)
        if stream is None:
            stream = self._streams[handle] = self._driver.CUstream(handle)
        return stream

    def _launch_prepared(self) -> Any:
        cu = self._driver
        (err,) = cu.cuLaunchKernel(
            self._function,
            *self.grid,
            *self.block,
            0,
            self._stream(),
            ctypes.addressof(self._params),
            0,
        )
        return None if err == cu.CUresult.CUDA_SUCCESS else err

    def __call__(self) -> None:
        if self.prepared:
            err = self._launch_prepared()
            if err is None:
                return
            # A launch the driver refused did not run: switch to Numba's launcher for good.
            self.prepared, self.reason = False, f"cuLaunchKernel returned {err}"
            warnings.warn(
                f"prepared Numba launch failed ({self.reason}); using Numba's launcher",
                RuntimeWarning,
                stacklevel=2,
            )
        self._fallback(*self._args)


bind_numba_launch = PreparedLaunch
"""A zero-argument launcher of ``dispatcher[grid, block](*args)``: the name the managers use
for :class:`PreparedLaunch`."""
