"""Compile, cache, load and launch environment kernels (CUDA C, or numba @cuda.jit).

CUDA C (the ``pycuda`` backend): nvcc compiles, pycuda loads the module and looks the kernels
up, and every launch goes through the CUDA driver API on torch's current stream
(``driver_launch``; pycuda's own launches use the legacy default stream, which a CUDA graph
cannot capture). The backend keeps WarpDrive's name ``pycuda`` and still needs PyCUDA.

Launch convention: one block per environment and one thread per agent, i.e. grid =
``(num_envs, 1, 1)`` and block = ``(num_agents, 1, 1)`` unless a launch overrides them.

CUDA C sources are compiled with ``nvcc -cubin -arch=sm_XY`` for the device's own
architecture and cached in ``${AI_ECONOMIST_CACHE_DIR:-~/.cache/ai_economist}/cuda/<key>.cubin``
where the key is the sha256 of the source text (every ``#include "..."`` file included), the
``-D`` defines, the architecture, the flags and the nvcc version. pycuda is given the primary
context of torch's current device (``use_torch_primary_context``), so it shares torch's context
and kernels operate directly on torch tensors, on whichever GPU the process uses.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ai_economist.warp_drive.cuda_compile import (  # noqa: F401  (re-exported)
    cache_dir,
    collect_sources,
    compile_cuda_cached,
    compile_cuda_source,
    cubin_cache_key,
    device_arch,
    format_define,
    normalize_arch,
)
from ai_economist.warp_drive.data_manager import close_matches_message, lookup
from ai_economist.warp_drive.errors import (
    GPURuntimeError,
    UnknownNameError,
    cudasim_enabled,
    require_cuda_device,
    require_numba_cuda,
    require_pycuda,
)
from ai_economist.warp_drive.state import numba_arg, pycuda_arg

MAX_THREADS_PER_BLOCK = 1024


def _check_launch_shape(num_agents: int, num_envs: int, max_threads: int = MAX_THREADS_PER_BLOCK):
    for label, value in (("num_agents", num_agents), ("num_envs", num_envs)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(f"{label} must be a positive integer, got {value!r}.")
    if num_agents > max_threads:
        raise ValueError(
            f"num_agents={num_agents} needs {num_agents} threads per block (one per agent) but the "
            f"device allows at most {max_threads}; use fewer agents per environment."
        )


def _threads(block) -> int:
    return int(np.prod(block)) if isinstance(block, tuple) else int(block)


def _check_block(block, max_threads: int) -> None:
    if _threads(block) > max_threads:
        raise ValueError(
            f"A block of {block} has {_threads(block)} threads; the device allows {max_threads}."
        )


_PUSHED_CONTEXTS: dict[int, Any] = {}


def use_torch_primary_context(drv: ModuleType) -> None:
    """Make the primary context of torch's current CUDA device pycuda's current context.

    pycuda then shares torch's context (kernels work on torch tensors in place). This is the
    device ``torch.cuda.current_device()`` names, not always device 0 as with
    ``pycuda.autoprimaryctx``: a data-parallel process on ``cuda:1`` must launch its kernels on
    GPU 1, where its tensors live.
    """
    import torch

    index = torch.cuda.current_device()
    drv.init()
    current = drv.Context.get_current()
    if current is not None and current.get_device().pci_bus_id() == drv.Device(index).pci_bus_id():
        return
    if index not in _PUSHED_CONTEXTS:
        context = drv.Device(index).retain_primary_context()
        _PUSHED_CONTEXTS[index] = context
        atexit.register(_pop_context, context)
    _PUSHED_CONTEXTS[index].push()


def _pop_context(context: Any) -> None:
    try:
        context.pop()
    except Exception:  # noqa: BLE001 - best effort at interpreter exit
        pass


class CUDAFunctionManager:
    """Loads CUDA C kernels through pycuda and launches them on torch tensors through the CUDA
    driver on torch's current stream (``bind``/``launch``; see the module docstring).

    Args:
        num_agents: threads per block (one per agent), 1..1024.
        num_envs: blocks (one per environment).
        process_id: recorded for multi-process setups.
    """

    def __init__(self, num_agents: int, num_envs: int, process_id: int = 0) -> None:
        _check_launch_shape(num_agents, num_envs)
        self.num_agents, self.num_envs, self.process_id = int(num_agents), int(num_envs), process_id
        self.grid = (self.num_envs, 1, 1)
        self.block = (self.num_agents, 1, 1)
        self.cubin_path: Path | None = None
        self._module = None
        self._functions: dict[str, Any] = {}
        self._declared: list[str] = []
        self._driver_module = None  # the same cubin loaded through the driver (bind)
        self._driver_functions: dict[str, Any] = {}

    def compile_and_load_cuda(
        self,
        source_path: str | os.PathLike,
        defines: Mapping[str, int | float] | None = None,
        include_dirs: Iterable[str | os.PathLike] = (),
        arch: str | int | tuple[int, int] | None = None,
        *,
        fast_math: bool = False,
        nvcc: str | os.PathLike | None = None,
        extra_flags: Iterable[str] = (),
    ) -> Path:
        """Compile ``source_path`` (cached) for this GPU and load it; returns the cubin path."""
        require_cuda_device()
        require_pycuda()
        arch = normalize_arch(arch) if arch is not None else device_arch()
        cubin = compile_cuda_cached(
            source_path, arch, defines, include_dirs,
            fast_math=fast_math, nvcc=nvcc, extra_flags=tuple(extra_flags),
        )  # fmt: skip
        names = collect_sources(source_path, include_dirs)
        text = "\n".join(p.read_text(errors="replace") for p in names)
        self._declared = re.findall(r"__global__\s+void\s+(\w+)\s*\(", text)
        self.load_cubin(cubin)
        return cubin

    def load_cubin(self, cubin_path: str | os.PathLike) -> None:
        """Load a compiled cubin into torch's primary context."""
        drv = require_pycuda()
        use_torch_primary_context(drv)
        max_threads = drv.Context.get_device().get_attribute(
            drv.device_attribute.MAX_THREADS_PER_BLOCK
        )
        _check_launch_shape(self.num_agents, self.num_envs, max_threads)
        self._module = drv.module_from_file(str(cubin_path))
        self.cubin_path = Path(cubin_path)
        self._functions.clear()
        self._driver_functions.clear()

    def initialize_functions(self, names: Iterable[str]) -> None:
        """Look up kernels by name (``extern "C"`` names) so launches need no lookup."""
        if self._module is None:
            raise GPURuntimeError("No CUDA module loaded; call compile_and_load_cuda first.")
        drv = require_pycuda()
        for name in names:
            try:
                self._functions[name] = self._module.get_function(name)
            except drv.LogicError:
                raise UnknownNameError(
                    close_matches_message(name, self._declared, "CUDA kernel")
                    + ' (kernels must be declared extern "C").'
                ) from None

    def get_function(self, name: str):
        """The pycuda ``Function`` of an initialised kernel."""
        if name not in self._functions:
            self.initialize_functions([name])
        return self._functions[name]

    def prepare_args(self, *args: Any) -> tuple:
        """Convert arguments once (tensors -> pointers, Python scalars -> int32/float32)."""
        return tuple(pycuda_arg(a) for a in args)

    def bind(self, name: str, *args: Any, grid=None, block=None) -> Callable[[], None]:
        """A zero-argument launcher with converted arguments, for the lowest per-step overhead.

        It launches through the CUDA driver on torch's current stream (``driver_launch``), so
        the launch can be captured in a CUDA graph with the torch work around it.  Device
        pointers are taken once: the tensors must stay allocated (the data manager's do).
        """
        from ai_economist.warp_drive.driver_launch import DriverModule, StreamLaunch

        self.get_function(name)  # an unknown name fails here, with the close matches
        args = self.prepare_args(*args)
        grid = self.grid if grid is None else tuple(grid)
        block = self.block if block is None else tuple(block)
        _check_block(block, MAX_THREADS_PER_BLOCK)
        if self._driver_module is None or self._driver_module.path != self.cubin_path:
            self._driver_module = DriverModule(self.cubin_path)
        function = self._driver_functions.get(name)
        if function is None:
            function = self._driver_functions[name] = self._driver_module.function(name)
        return StreamLaunch(function, args, grid, block, name)

    def launch(self, name: str, *args: Any, grid=None, block=None) -> None:
        """Launch kernel ``name`` on the current stream (asynchronous)."""
        self.bind(name, *args, grid=grid, block=block)()


def _is_numba_kernel(obj: Any) -> bool:
    cls = type(obj)
    return cls.__name__ in ("CUDADispatcher", "FakeCUDAKernel") and hasattr(obj, "py_func")


def _import_module(module_path: str | os.PathLike) -> ModuleType:
    text = str(module_path)
    if text.endswith(".py") or os.sep in text:
        path = Path(text).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"Numba kernel module {path} does not exist.")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
        mod_name = f"_ai_economist_numba_{path.stem}_{digest}"
        if mod_name in sys.modules:
            return sys.modules[mod_name]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(text)


class NumbaFunctionManager:
    """Loads a module of numba ``@cuda.jit`` kernels and launches them.

    Each (kernel, grid, block) is configured once and cached, and torch tensors are converted
    to numba arrays once per distinct tensor, so a launch costs little Python work. Under
    ``NUMBA_ENABLE_CUDASIM=1`` kernels run in Numba's simulator on CPU tensors.
    """

    def __init__(self, num_agents: int, num_envs: int) -> None:
        _check_launch_shape(num_agents, num_envs)
        self.num_agents, self.num_envs = int(num_agents), int(num_envs)
        self.grid, self.block = self.num_envs, self.num_agents
        self.module: ModuleType | None = None
        self._kernels: dict[str, Any] = {}
        self._configured: dict[tuple, Any] = {}
        self._arg_cache: dict[tuple, Any] = {}

    def load_module(self, module_path: str | os.PathLike) -> ModuleType:
        """Import a module (dotted name or ``.py`` path) and register its ``@cuda.jit`` kernels."""
        nb_cuda = require_numba_cuda()
        if not cudasim_enabled():
            if not nb_cuda.is_available():
                require_cuda_device()  # raises with the CPU hint
            max_threads = nb_cuda.get_current_device().MAX_THREADS_PER_BLOCK
            _check_launch_shape(self.num_agents, self.num_envs, max_threads)
        module = _import_module(module_path)
        kernels = {n: o for n, o in vars(module).items() if _is_numba_kernel(o)}
        if not kernels:
            raise ValueError(f"Module {module_path} defines no numba @cuda.jit kernels.")
        self.module = module
        self._kernels.update(kernels)
        self._configured.clear()
        return module

    def initialize_functions(self, names: Iterable[str]) -> None:
        """Check that every kernel in ``names`` exists (WarpDrive API parity)."""
        for name in names:
            self.get_function(name)

    def get_function(self, name: str):
        """The numba kernel (dispatcher) called ``name``."""
        return lookup(self._kernels, name, "numba kernel")

    def _convert(self, arg: Any) -> Any:
        if not hasattr(arg, "data_ptr"):
            return arg
        key = (arg.data_ptr(), tuple(arg.shape), arg.stride(), arg.dtype, arg.device)
        conv = self._arg_cache.get(key)
        if conv is None:
            if len(self._arg_cache) > 4096:
                self._arg_cache.clear()
            conv = self._arg_cache[key] = (numba_arg(arg), arg)  # keep the tensor alive
        return conv[0]

    def prepare_args(self, *args: Any) -> tuple:
        """Convert tensors to numba arrays (zero copy)."""
        return tuple(self._convert(a) for a in args)

    def configured(self, name: str, grid=None, block=None):
        """``kernel[grid, block]``, configured once and cached."""
        grid = self.grid if grid is None else grid
        block = self.block if block is None else block
        key = (name, grid, block)
        launcher = self._configured.get(key)
        if launcher is None:
            _check_block(block, MAX_THREADS_PER_BLOCK)
            launcher = self._configured[key] = self.get_function(name)[grid, block]
        return launcher

    def launch(self, name: str, *args: Any, grid=None, block=None) -> None:
        """Launch kernel ``name`` (default grid ``num_envs``, block ``num_agents``); a kernel
        built for fixed array shapes (``numba_shapes``) checks them first."""
        from ai_economist.warp_drive.numba_shapes import check_fixed_shapes

        prepared = self.prepare_args(*args)
        check_fixed_shapes(name, self.get_function(name), prepared)
        self.configured(name, grid, block)(*prepared)

    def bind(self, name: str, *args: Any, grid=None, block=None) -> Callable[[], None]:
        """A zero-argument launcher with converted arguments, for the lowest per-step overhead:
        the kernel parameters are packed once (``numba_launch.bind_numba_launch``, one driver
        call a launch; Numba's own launcher under ``NUMBA_ENABLE_CUDASIM=1``)."""
        from ai_economist.warp_drive.numba_launch import bind_numba_launch
        from ai_economist.warp_drive.numba_shapes import check_fixed_shapes

        grid = self.grid if grid is None else grid
        block = self.block if block is None else block
        _check_block(block, MAX_THREADS_PER_BLOCK)
        kernel, prepared = self.get_function(name), self.prepare_args(*args)
        check_fixed_shapes(name, kernel, prepared)  # kernels built for fixed array shapes
        return bind_numba_launch(kernel, prepared, grid, block)
