"""Compiling CUDA C without a GPU, the cubin cache, launch-shape checks, numba under the simulator."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ai_economist.warp_drive import function_manager as fm_mod
from ai_economist.warp_drive.errors import GPURuntimeError
from ai_economist.warp_drive.function_manager import (
    CUDAFunctionManager,
    NumbaFunctionManager,
    collect_sources,
    compile_cuda_cached,
    compile_cuda_source,
    cubin_cache_key,
    format_define,
    normalize_arch,
)

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]


def _nvcc() -> str | None:
    try:
        from ai_economist.warp_drive.errors import find_nvcc

        return str(find_nvcc())
    except RuntimeError:
        return None


needs_nvcc = pytest.mark.skipif(_nvcc() is None, reason="nvcc (CUDA toolkit) is not installed")


def test_normalize_arch_and_defines():
    assert normalize_arch((9, 0)) == normalize_arch(90) == normalize_arch("sm_90") == "sm_90"
    with pytest.raises(ValueError):
        normalize_arch("hopper")
    assert format_define("kN", 52) == "-DkN=52"
    assert format_define("kOn", True) == "-DkOn=1"
    assert format_define("kGamma", 0.1) == "-DkGamma=0.10000000149011612f"
    assert np.float32(float(format_define("k", 0.1)[5:-1])) == np.float32(0.1)
    with pytest.raises(ValueError, match="not finite"):
        format_define("k", float("inf"))
    with pytest.raises(ValueError, match="C identifier"):
        format_define("1k", 1)


def test_collect_sources_follows_quoted_includes():
    names = [p.name for p in collect_sources(DATA / "tiny_kernel.cu")]
    assert names == ["tiny_kernel.cu", "tiny_helpers.cuh"]


@needs_nvcc
def test_compile_tiny_kernel_for_sm90_without_gpu(tmp_path):
    out = compile_cuda_source(
        DATA / "tiny_kernel.cu", tmp_path / "tiny.cubin", "sm_90", {"kEpisodeLength": 4}
    )
    assert out.read_bytes()[:4] == b"\x7fELF"


@needs_nvcc
def test_compile_error_shows_nvcc_output(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void K(float* x) { x[0] = undefined_name; }\n')
    with pytest.raises(GPURuntimeError, match="undefined_name") as info:
        compile_cuda_source(bad, tmp_path / "bad.cubin", "sm_90")
    assert "-arch=sm_90" in str(info.value)
    with pytest.raises(FileNotFoundError):
        compile_cuda_source(tmp_path / "missing.cu", tmp_path / "x.cubin")


@needs_nvcc
def test_cache_key_and_cached_compile(tmp_path, monkeypatch):
    src_dir = tmp_path / "src"
    shutil.copytree(DATA, src_dir, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    src = src_dir / "tiny_kernel.cu"
    base = cubin_cache_key(src, "sm_90", {"kEpisodeLength": 3})
    assert base == cubin_cache_key(src, (9, 0), {"kEpisodeLength": 3})
    assert base != cubin_cache_key(src, "sm_90", {"kEpisodeLength": 4})
    assert base != cubin_cache_key(src, "sm_80", {"kEpisodeLength": 3})
    assert base != cubin_cache_key(src, "sm_90", {"kEpisodeLength": 3}, fast_math=True)
    (src_dir / "tiny_helpers.cuh").write_text(
        (src_dir / "tiny_helpers.cuh").read_text() + "\n// changed\n"
    )
    assert base != cubin_cache_key(src, "sm_90", {"kEpisodeLength": 3})  # included file counts

    monkeypatch.setenv("AI_ECONOMIST_CACHE_DIR", str(tmp_path / "cache"))
    cubin = compile_cuda_cached(src, "sm_90", {"kEpisodeLength": 3})
    assert cubin.parent == tmp_path / "cache" / "cuda" and len(cubin.stem) == 64
    assert cubin.is_file() and not list(cubin.parent.glob("*.tmp.cubin"))

    def boom(*a, **k):
        raise AssertionError("should have used the cache")

    monkeypatch.setattr(fm_mod, "compile_cuda_source", boom)
    assert compile_cuda_cached(src, "sm_90", {"kEpisodeLength": 3}) == cubin


def test_launch_shape_validation():
    for cls in (CUDAFunctionManager, NumbaFunctionManager):
        with pytest.raises(ValueError, match="num_agents must be a positive integer"):
            cls(0, 4)
        with pytest.raises(ValueError, match="num_envs must be a positive integer"):
            cls(4, -1)
        with pytest.raises(ValueError, match="at most 1024"):
            cls(1025, 4)
    fm = CUDAFunctionManager(52, 100)
    assert fm.grid == (100, 1, 1) and fm.block == (52, 1, 1)
    nfm = NumbaFunctionManager(52, 100)
    assert (nfm.grid, nfm.block) == (100, 52)


def _numba_in_sim_mode() -> bool:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        return False
    if "numba" in sys.modules:
        return bool(sys.modules["numba"].config.ENABLE_CUDASIM)
    return True


def test_numba_kernel_under_simulator():
    pytest.importorskip("numba")
    pytest.importorskip("torch")
    script = DATA / "numba_sim_check.py"
    if _numba_in_sim_mode():
        spec = importlib.util.spec_from_file_location("wd_numba_sim_check", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.run()
        return
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0 and "NUMBA_SIM_OK" in proc.stdout, proc.stderr[-3000:]


@pytest.mark.skipif(not _numba_in_sim_mode(), reason="needs NUMBA_ENABLE_CUDASIM=1 at start-up")
def test_numba_manager_errors_under_simulator(tmp_path):
    pytest.importorskip("numba")
    nfm = NumbaFunctionManager(2, 2)
    nfm.load_module(DATA / "tiny_numba_kernels.py")
    with pytest.raises(KeyError, match="tiny_stp.*'tiny_step'"):
        nfm.get_function("tiny_stp")
    with pytest.raises(KeyError):
        nfm.initialize_functions(["missing"])
    assert nfm.configured("tiny_step") is nfm.configured("tiny_step")  # cached launcher
    with pytest.raises(ValueError, match="1025 threads"):
        nfm.launch("tiny_step", block=1025)
    empty = tmp_path / "no_kernels.py"
    empty.write_text("X = 1\n")
    with pytest.raises(ValueError, match="no numba @cuda.jit kernels"):
        nfm.load_module(str(empty))
    with pytest.raises(FileNotFoundError):
        nfm.load_module(str(tmp_path / "absent.py"))
