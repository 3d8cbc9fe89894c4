"""Lazy imports and the messages users see when part of the GPU stack is missing."""

import builtins
import subprocess
import sys
from pathlib import Path

import pytest

from ai_economist.warp_drive import errors
from ai_economist.warp_drive.errors import (
    find_nvcc,
    require_cuda_device,
    require_numba_cuda,
    require_pycuda,
    require_torch,
)

REPO = Path(__file__).resolve().parents[2]
MODULES = [
    "errors",
    "state",
    "data_manager",
    "function_manager",
    "env_reset",
    "registrar",
    "cuda_compile",
    "c_signature",
]


def test_importing_the_runtime_imports_no_gpu_stack_and_prints_nothing():
    code = (
        "import sys\n"
        + "".join(f"import ai_economist.warp_drive.{m}\n" for m in MODULES)
        + "print(sorted(m for m in ('torch', 'numba', 'pycuda', 'cupy') if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[]\n" and proc.stderr == ""


def _block_import(monkeypatch, blocked: str, exc: Exception):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == blocked or name.startswith(blocked + "."):
            raise exc
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


def test_missing_torch(monkeypatch):
    _block_import(monkeypatch, "torch", ImportError("No module named 'torch'"))
    with pytest.raises(ImportError, match=r'pip install "ai-economist\[train\]"'):
        require_torch()


def test_missing_pycuda(monkeypatch):
    _block_import(monkeypatch, "pycuda", ImportError("No module named 'pycuda'"))
    with pytest.raises(ImportError, match=r"ai-economist\[pycuda\]") as info:
        require_pycuda()
    assert 'env_backend="cpu"' in str(info.value)


def test_missing_numba(monkeypatch):
    _block_import(monkeypatch, "numba", ImportError("No module named 'numba'"))
    with pytest.raises(ImportError, match=r'pip install "ai-economist\[numba\]"'):
        require_numba_cuda()


def test_numba_cuda_with_too_new_numpy(monkeypatch):
    _block_import(
        monkeypatch, "numba", AttributeError("module 'numpy' has no attribute 'row_stack'")
    )
    with pytest.raises(ImportError, match=r"numba-cuda needs numpy<2\.5"):
        require_numba_cuda()


def test_other_attribute_errors_are_not_hidden(monkeypatch):
    monkeypatch.setattr(errors, "_numpy_version", lambda: (2, 4))
    _block_import(monkeypatch, "numba", AttributeError("something else"))
    with pytest.raises(AttributeError, match="something else"):
        require_numba_cuda()


def test_no_gpu_points_to_the_cpu_backend():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    with pytest.raises(RuntimeError, match=r'env_backend="cpu"') as info:
        require_cuda_device()
    assert "ai-economist[gpu]" in str(info.value)
    from ai_economist.warp_drive.data_manager import CUDADataManager

    with pytest.raises(RuntimeError, match="No CUDA GPU is available"):
        CUDADataManager(4, 10, 2)  # device defaults to "cuda"
    from ai_economist.warp_drive.function_manager import CUDAFunctionManager

    with pytest.raises(RuntimeError, match="No CUDA GPU is available"):
        CUDAFunctionManager(4, 2).compile_and_load_cuda(
            REPO / "tests/warp_drive/data/tiny_kernel.cu"
        )


def test_nvcc_not_found(monkeypatch):
    monkeypatch.setattr(errors.os, "access", lambda *a, **k: False)
    with pytest.raises(RuntimeError, match="nvcc .* was not found") as info:
        find_nvcc()
    assert "CUDA_HOME" in str(info.value) and 'env_backend="cpu"' in str(info.value)


def test_cudasim_flag(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert errors.cudasim_enabled()
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    assert not errors.cudasim_enabled()
