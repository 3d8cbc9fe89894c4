"""The CUDA C twin of the fused sampling kernel, CPU side: which kernel each dtype combination
launches, and nvcc compiling ``kernels/fused_sampling.cu`` with every one of those kernels.
Its results against torch on a GPU: ``test_fused_sampling_gpu.py``."""

from __future__ import annotations

import subprocess
import sys

import torch

from ai_economist.warp_drive.cuda_compile import compile_cuda_source
from ai_economist.warp_drive.training import fused_sampling_cuda as fsc


def test_kernel_names_by_dtype():
    f32, bf16 = torch.float32, torch.bfloat16
    assert fsc.cuda_kernel_name(f32, f32, torch.uint8, torch.int32) == "fused_sample_f32f32_u8_i32"
    assert fsc.cuda_kernel_name(bf16, bf16, f32, torch.int64) == "fused_sample_bf16bf16_f32_i64"
    assert fsc.cuda_kernel_name(bf16, f32, torch.int32, torch.int32) == (
        "fused_sample_bf16f32_i32_i32"
    )
    assert fsc.cuda_kernel_name(f32, bf16, torch.uint8, torch.int32) is None  # no narrowing
    assert fsc.cuda_kernel_name(torch.float16, torch.float16, torch.uint8, torch.int32) is None
    assert fsc.cuda_kernel_name(f32, f32, torch.uint8, torch.int16) is None
    assert len(fsc.kernel_names()) == 3 * 3 * 2  # (logit, value) x mask x env action


def test_nvcc_builds_every_kernel_the_launcher_names(nvcc, tmp_path):
    cubin = compile_cuda_source(fsc.SOURCE, tmp_path / "fused_sampling.cubin", "sm_90",
                                nvcc=nvcc)  # fmt: skip
    image = cubin.read_bytes()
    for name in fsc.kernel_names():
        assert name.encode() + b"\0" in image, name  # an extern "C" symbol of the cubin
    assert b"fused_sample_f32bf16" not in image


def test_unsupported_env_action_dtypes_launch_nothing():
    rows = torch.zeros(2, 3)
    outputs = (torch.zeros(2, dtype=torch.long), torch.zeros(2), torch.zeros(2),
               torch.zeros(2, dtype=torch.int16))  # fmt: skip
    assert not fsc.launch(rows, rows, rows, rows[:, 0], outputs, -1e9)


def test_importing_the_rollout_imports_no_triton_and_builds_nothing():
    code = (
        "import sys; import ai_economist.warp_drive.training.rollout; "
        "from ai_economist.warp_drive.training import fused_sampling_cuda as f; "
        "print('triton' in sys.modules, f._MODULES, f.cuda_c_available.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "{}", "0"]
