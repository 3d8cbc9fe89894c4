"""CUDA C kernel launches through the CUDA driver, on torch's current stream.

pycuda launches on the legacy default stream, which a CUDA graph cannot capture.  This module
loads a compiled cubin with the driver API (``libcuda`` through ``ctypes``: nothing to install
beyond the NVIDIA driver), packs a kernel's parameters once, and launches with one
``cuLaunchKernel`` call on the stream torch is using at that moment.  Outside a capture that is
torch's default stream (the same ordering as before); inside ``torch.cuda.graph(...)`` it is
the capturing stream, so an environment's step is recorded in the same graph as the policy.

The module is loaded into the context that is current on the calling thread, which
``function_manager.use_torch_primary_context`` makes torch's own.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.warp_drive.errors import GPURuntimeError

_LIBCUDA: ctypes.CDLL | None = None


def libcuda() -> ctypes.CDLL:
    """The CUDA driver library (loaded once), with the signatures used here."""
    global _LIBCUDA
    if _LIBCUDA is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise GPURuntimeError(
                f"the CUDA driver library libcuda.so.1 cannot be loaded ({exc}); an NVIDIA "
                "driver is needed to launch CUDA C kernels"
            ) from None
        vp, u = ctypes.c_void_p, ctypes.c_uint
        lib.cuModuleLoadData.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p]
        lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
        lib.cuLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
        lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        _LIBCUDA = lib
    return _LIBCUDA


def _check(result: int, what: str) -> None:
    if result != 0:
        text = ctypes.c_char_p()
        libcuda().cuGetErrorString(result, ctypes.byref(text))
        message = text.value.decode() if text.value else "unknown error"
        raise GPURuntimeError(f"{what} failed: CUDA error {result} ({message})")


def current_stream_handle(device_index: int | None = None) -> int:
    """The raw handle of torch's current CUDA stream on ``device_index`` (default: torch's
    current device); 0, the default stream, when torch's CUDA is not in use."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return 0
    if device_index is None:
        device_index = torch.cuda.current_device()
    return _raw_stream_reader(torch)(device_index)


def _raw_stream_reader(torch: Any) -> Any:
    """A fast reader of the current stream's handle: torch's internal
    ``_cuda_getCurrentRawStream`` (what its own compiled kernels use, well under a
    microsecond), else the public ``torch.cuda.current_stream(i).cuda_stream``."""
    global _RAW_STREAM
    if _RAW_STREAM is None:
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _RAW_STREAM = raw or (lambda i: torch.cuda.current_stream(i).cuda_stream)
    return _RAW_STREAM


_RAW_STREAM: Any = None


class DriverModule:
    """A cubin loaded through the driver into the current context."""

    def __init__(self, cubin_path: str | Path) -> None:
        self.path = Path(cubin_path)
        self._image = self.path.read_bytes()  # the driver may read it lazily: keep it alive
        self.handle = ctypes.c_void_p()
        _check(
            libcuda().cuModuleLoadData(ctypes.byref(self.handle), self._image),
            f"loading {self.path}",
        )

    def function(self, name: str) -> ctypes.c_void_p:
        """The ``CUfunction`` of kernel ``name`` (an ``extern "C"`` name)."""
        func = ctypes.c_void_p()
        _check(
            libcuda().cuModuleGetFunction(ctypes.byref(func), self.handle, name.encode()),
            f"looking up kernel {name!r} in {self.path.name}",
        )
        return func


_CTYPES = {
    np.dtype(np.uintp): ctypes.c_uint64,
    np.dtype(np.int32): ctypes.c_int32,
    np.dtype(np.uint32): ctypes.c_uint32,
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
}


def ctypes_parameter(value: Any) -> ctypes._SimpleCData:
    """One kernel parameter as the C type the kernel expects (from a numpy scalar such as
    ``function_manager.CUDAFunctionManager.prepare_args`` makes)."""
    ctype = _CTYPES.get(np.asarray(value).dtype)
    if ctype is None:
        raise TypeError(
            f"kernel parameter {value!r} of dtype {np.asarray(value).dtype} has no C type here; "
            f"expected one of {sorted(str(d) for d in _CTYPES)}"
        )
    return ctype(value.item() if hasattr(value, "item") else value)


def _launch_device() -> tuple[int, Any]:
    """(torch's current device index, the stream reader), or (0, None) without torch's CUDA:
    a launcher launches on the device that was current when it was bound."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return 0, None
    return torch.cuda.current_device(), _raw_stream_reader(torch)


class StreamLaunch:
    """A zero-argument launcher of one kernel with fixed parameters, on torch's current stream.

    Args:
        function: the kernel's ``CUfunction`` (``DriverModule.function``).
        params: its parameters (numpy scalars, pointers as ``np.uintp``).
        grid, block: launch dimensions (3-tuples).
        name: the kernel's name, for error messages.
    """

    def __init__(self, function: ctypes.c_void_p, params: Sequence[Any],
                 grid: Sequence[int], block: Sequence[int], name: str = "kernel") -> None:  # fmt: skip
        self.name = name
        self.grid = tuple(int(g) for g in grid)
        self.block = tuple(int(b) for b in block)
        self._function = function
        self._holders = [ctypes_parameter(p) for p in params]
        self._params = (ctypes.c_void_p * max(1, len(self._holders)))(
            *[ctypes.addressof(h) for h in self._holders]
        )
        self._launch = libcuda().cuLaunchKernel
        self._device, self._stream_of = _launch_device()

    def __call__(self) -> None:
        stream = self._stream_of(self._device) if self._stream_of else 0
        result = self._launch(self._function, *self.grid, *self.block, 0,
                              stream, self._params, None)  # fmt: skip
        if result != 0:
            _check(result, f"launching {self.name} (grid {self.grid}, block {self.block})")
