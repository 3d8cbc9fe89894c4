"""Lazy imports of the optional GPU stack, with error messages that say what to do.

Nothing here imports torch, pycuda or numba (or touches a GPU) at module import time: every
helper imports lazily when it is called, so ``import ai_economist.warp_drive.errors`` is free
on a machine without any of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

CPU_HINT = (
    "To run without a GPU, use the CPU backend instead: "
    'FoundationEnvWrapper(env, num_envs=..., env_backend="cpu").'
)

_EXTRA = {
    "torch": 'pip install "ai-economist[train]"  (or "ai-economist[gpu]" for the full GPU stack)',
    "pycuda": 'pip install "ai-economist[pycuda]"  (needs the CUDA toolkit: nvcc and cuda.h)',
    "numba": 'pip install "ai-economist[numba]"',
    "gpu": 'pip install "ai-economist[gpu]"',
}


class GPURuntimeError(RuntimeError):
    """Base class of the runtime's own errors (compilation, launch, configuration)."""


class DeviceMemoryError(GPURuntimeError, MemoryError):
    """The requested arrays do not fit into the free device memory."""


class UnknownNameError(KeyError):
    """A name that was never registered or pushed; the message lists close matches."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


def cudasim_enabled() -> bool:
    """True when Numba's CUDA simulator is requested (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0").strip() not in ("", "0")


def require_torch() -> ModuleType:
    """Import and return ``torch``, or raise an ``ImportError`` naming the extra to install."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            f"PyTorch is required for the GPU runtime and the trainer but could not be imported "
            f"({exc}). Install it with: {_EXTRA['torch']}."
        ) from exc
    return torch


def require_pycuda() -> ModuleType:
    """Import and return ``pycuda.driver`` (without creating a context).

    The context is shared with torch later through ``import pycuda.autoprimaryctx``.
    """
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        raise ImportError(
            f"The pycuda backend needs PyCUDA, which could not be imported ({exc}). "
            f'Install it with: {_EXTRA["pycuda"]}. Alternatively use env_backend="numba". '
            + CPU_HINT
        ) from exc
    return drv


def _numpy_version() -> tuple[int, int]:
    import numpy as np

    parts = np.__version__.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return (0, 0)


def require_numba_cuda() -> ModuleType:
    """Import and return ``numba.cuda`` (the simulator when ``NUMBA_ENABLE_CUDASIM=1``).

    numba-cuda (<= 0.30) fails to import with numpy >= 2.5 (``np.row_stack`` was removed);
    that case is detected and reported as such.
    """
    try:
        import numba.cuda as nb_cuda
    except ImportError as exc:
        raise ImportError(
            f"The numba backend needs numba and numba-cuda, which could not be imported ({exc}). "
            f"Install them with: {_EXTRA['numba']}. " + CPU_HINT
        ) from exc
    except AttributeError as exc:
        numpy_too_new = "row_stack" in str(exc) or _numpy_version() >= (2, 5)
        if numpy_too_new:
            import numpy as np

            raise ImportError(
                f"numba-cuda needs numpy<2.5 but numpy {np.__version__} is installed "
                f"(import failed with: {exc}). Install a compatible numpy: "
                f'pip install "numpy<2.5".'
            ) from exc
        raise
    return nb_cuda


def require_cuda_device(device_index: int | None = None):
    """Return the ``torch.device`` of a visible CUDA GPU, or raise a ``RuntimeError``.

    Args:
        device_index: which GPU; defaults to torch's current device.
    """
    torch = require_torch()
    if not torch.cuda.is_available():
        build = getattr(torch.version, "cuda", None)
        why = (
            "this torch build has no CUDA support (CPU-only wheel)"
            if not build
            else f"torch was built for CUDA {build} but no GPU/driver is visible"
        )
        raise RuntimeError(
            f"No CUDA GPU is available: {why}. Install the GPU stack with {_EXTRA['gpu']} on a "
            f"machine with an NVIDIA GPU. " + CPU_HINT
        )
    index = torch.cuda.current_device() if device_index is None else int(device_index)
    count = torch.cuda.device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"CUDA device {index} does not exist; {count} GPU(s) are visible.")
    return torch.device("cuda", index)


def find_nvcc(nvcc: str | os.PathLike | None = None) -> Path:
    """Locate the ``nvcc`` compiler.

    Search order: the explicit argument, ``$NVCC``, ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``,
    ``PATH``, ``/usr/local/cuda/bin``.
    """
    candidates: list[str] = []
    if nvcc:
        candidates.append(str(nvcc))
    if os.environ.get("NVCC"):
        candidates.append(os.environ["NVCC"])
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "bin", "nvcc"))
    which = shutil.which("nvcc")
    if which:
        candidates.append(which)
    candidates.append("/usr/local/cuda/bin/nvcc")
    for cand in candidates:
        path = Path(cand)
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise RuntimeError(
        "nvcc (the CUDA compiler) was not found; the pycuda backend compiles its kernels with it. "
        "Install the CUDA toolkit and put nvcc on PATH (or set CUDA_HOME / NVCC). Tried: "
        + ", ".join(candidates)
        + '. Alternatively use env_backend="numba", or: '
        + CPU_HINT
    )


_NVCC_VERSIONS: dict[str, str] = {}


def nvcc_version(nvcc: str | os.PathLike | None = None) -> str:
    """The ``nvcc --version`` text (cached per compiler path); part of the cubin cache key."""
    path = str(find_nvcc(nvcc))
    if path not in _NVCC_VERSIONS:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"'{path} --version' failed: {out.stderr.strip()}")
        _NVCC_VERSIONS[path] = out.stdout.strip()
    return _NVCC_VERSIONS[path]
