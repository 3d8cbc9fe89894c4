"""Run the one-step economy's CUDA C step on the CPU (test infrastructure, no GPU needed).

``emulated_wrapper(env, num_envs)`` is a numpy-backend ``EnvWrapper`` whose step is the
``.cu`` kernel compiled by g++ against the CUDA shim of the COVID-19 tests (one std::thread per
CUDA thread) and called through ctypes on the data manager's CPU tensors. It checks the CUDA C
logic (indexing, barriers, the Saez formula) without a GPU, not GPU specifics (launch, FMA
contraction, CUDA's math library).
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
from pathlib import Path

import numpy as np

from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import envs_per_block, header_for
from ai_economist.warp_drive.env_wrapper import EnvWrapper

HERE = Path(__file__).resolve().parent
SHIM_DIR = HERE.parent / "covid19" / "cuda_emulation"
LAUNCHER = HERE / "cuda_emulation" / "one_step_emu.cpp"


def compiler_problem() -> str | None:
    """Why the emulation cannot be built here, or None."""
    if shutil.which("g++") is None:
        return "g++ is not installed"
    if not (SHIM_DIR / "cuda_emu.h").is_file():
        return f"the CUDA shim {SHIM_DIR / 'cuda_emu.h'} is missing"
    return None


def build_library(env, build_dir: Path) -> Path:
    """g++-compile the step kernel for ``env``'s declaration (cached by content)."""
    spec = env.state_spec()
    source = env.kernels().cuda_source
    header = header_for(env, spec)
    names = ", ".join(f.cname for f in spec.kernel_fields())
    args_header = f"#define ONE_STEP_ECONOMY_ARGS {names}\n"
    digest = hashlib.sha256((header + args_header).encode())
    for path in (*sorted(source.parent.iterdir()), LAUNCHER, SHIM_DIR / "cuda_emu.h"):
        digest.update(path.read_bytes())
    key = digest.hexdigest()[:16]
    library = build_dir / f"libone_step_emu_{key}.so"
    if library.is_file():
        return library
    include = codegen.write_header(env.name, header, build_dir / key)
    (include / "one_step_args.h").write_text(args_header)
    cmd = ["g++", "-std=c++20", "-O2", "-shared", "-fPIC", "-pthread", "-w",
           f'-DONE_STEP_SOURCE="{source}"', "-I", str(include), "-I", str(SHIM_DIR),
           str(LAUNCHER), "-o", str(library)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"g++ failed:\n{proc.stderr[-4000:]}")
    return library


def emulated_wrapper(env, num_envs: int, build_dir: Path, seed: int = 0) -> EnvWrapper:
    """A numpy-backend wrapper whose ``step_all_envs`` runs the emulated CUDA C kernel."""
    wrapper = EnvWrapper(env, num_envs, "numpy", seed=seed)
    backend = wrapper.backend
    lib = ctypes.CDLL(str(build_library(env, build_dir)))
    args, types = [], [ctypes.c_int, ctypes.c_int]
    for f in backend.spec.kernel_fields():
        if f.is_scalar_constant:
            value = backend.data_manager.scalar_value(f.name)
            ctype = ctypes.c_double if np.dtype(f.dtype).kind == "f" else ctypes.c_int
            args.append(ctype(value.item() if hasattr(value, "item") else value))
            types.append(ctype)
        else:
            args.append(ctypes.c_void_p(backend.tensor(f.name).data_ptr()))
            types.append(ctypes.c_void_p)
    lib.emu_step.argtypes = [types[0], types[1], ctypes.c_int, *types[2:]]
    lib.emu_step.restype = None
    threads = env.num_agents
    per_block = envs_per_block(env, num_envs, threads)  # the pycuda backend's launch shape

    def step() -> None:
        lib.emu_step(num_envs, threads, per_block, *args)

    backend.step = step
    return wrapper
