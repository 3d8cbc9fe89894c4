"""Run the COVID-19 CUDA C kernels on the CPU (test infrastructure, no GPU needed).

``EmulatedCudaBackend`` is ``CovidGpuBackend`` with the kernels of ``covid19_build.cu``
compiled by g++ against a tiny CUDA shim (``cuda_emulation/cuda_emu.h``: one std::thread per
CUDA thread, ``__syncthreads`` = std::barrier, ``__shared__`` = static, blocks run one after
another) and called through ctypes on torch CPU tensors, with the same generated header and
the same pointer table as on the GPU.  It checks the CUDA C logic (indexing, struct order,
kernels, episode-end metrics) without a GPU; it does not check GPU specifics (launch, memory model,
FMA contraction or CUDA's math library, whose last-ulp differences the tolerances cover).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import shutil
import subprocess
from pathlib import Path

from ai_economist.foundation.scenarios.covid19.backends.gpu_backend import CovidGpuBackend
from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.backends.gpu import header_for

EMULATION_DIR = Path(__file__).resolve().parent / "cuda_emulation"
CUDA_SOURCES = gpu_state.CUDA_SOURCES


def compiler_problem() -> str | None:
    """Why the emulation cannot be built here, or None."""
    if shutil.which("g++") is None:
        return "g++ is not installed"
    return None


def build_library(env_name: str, header: str, build_dir: Path) -> Path:
    """g++-compile the kernels with ``header`` into a shared library (cached by content)."""
    digest = hashlib.sha256(header.encode())
    for path in (*CUDA_SOURCES, *sorted(EMULATION_DIR.iterdir())):
        digest.update(path.read_bytes())
    key = digest.hexdigest()[:16]
    library = build_dir / f"libcovid19_emu_{key}.so"
    if library.is_file():
        return library
    include = codegen.write_header(env_name, header, build_dir / key)
    cmd = [
        "g++", "-std=c++20", "-O2", "-shared", "-fPIC", "-pthread", "-w",
        f'-DCOVID_BUILD_SOURCE="{gpu_state.BUILD_SOURCE}"',
        "-I", str(include), "-I", str(EMULATION_DIR),
        str(EMULATION_DIR / "emu_launch.cpp"), "-o", str(library),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"g++ failed to build the CUDA emulation:\n{' '.join(cmd)}\n{proc.stderr}"
        )
    return library


class EmulatedCudaBackend(CovidGpuBackend):
    """``CovidGpuBackend`` running the CUDA C kernels on the CPU (see the module docstring):
    the generic backend's header, declaration checks and pointer table, g++ instead of nvcc,
    ctypes calls instead of pycuda launches, torch resets instead of the reset kernel."""

    def __init__(self, params, components, num_envs: int, build_dir: Path, **kwargs) -> None:
        self._build_dir = Path(build_dir)
        super().__init__(
            params, components, num_envs, backend=EnvBackend.PYCUDA, device="cpu", **kwargs
        )
        self.name = "cuda-cpu-emulation"

    def _setup_pycuda(self) -> None:
        header = header_for(self.env, self.spec)
        self._library = ctypes.CDLL(str(build_library(self.env.name, header, self._build_dir)))
        launch = self._library.emu_launch
        launch.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        launch.restype = ctypes.c_int

    def _bind_kernels(self) -> dict:
        self._pointer_table = codegen.pointer_table(self.data_manager, self.spec)
        table = self._pointer_table.data_ptr()
        launch = self._library.emu_launch

        def call(name: bytes) -> None:
            if launch(name, table, self.num_envs, self.threads_per_env) != 0:
                raise RuntimeError(f"unknown kernel {name!r}")

        return {
            name: functools.partial(call, name.encode()) for name in self.env.kernels().all_kernels
        }

    def _make_fused_reset(self):
        return None  # no pycuda here: done envs reset through CUDAEnvironmentReset (torch)
