"""Driver launches on torch's current stream (``warp_drive/driver_launch.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.warp_drive.driver_launch import ctypes_parameter, current_stream_handle

KERNEL = r"""
extern "C" __global__ void add_value(float* x, int n, float value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += value;
}
"""


def test_parameters_take_the_kernels_c_types():
    assert ctypes_parameter(np.int32(-3)).value == -3
    assert ctypes_parameter(np.float32(0.5)).value == 0.5
    assert ctypes_parameter(np.uintp(2**40)).value == 2**40
    with pytest.raises(TypeError, match="int16"):
        ctypes_parameter(np.int16(1))


def test_stream_handle_is_the_default_stream_without_cuda():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        pytest.skip("CUDA initialised: the handle is torch's current stream")
    assert current_stream_handle() == 0


@pytest.mark.gpu
def test_launches_run_eagerly_and_inside_a_captured_graph(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from ai_economist.warp_drive.function_manager import CUDAFunctionManager

    source = tmp_path / "add_value.cu"
    source.write_text(KERNEL)
    x = torch.zeros(100, device="cuda")
    fm = CUDAFunctionManager(num_agents=32, num_envs=4)
    fm.compile_and_load_cuda(source)
    launch = fm.bind("add_value", x, np.int32(100), np.float32(1.5))
    launch()
    torch.cuda.synchronize()
    assert torch.equal(x, torch.full_like(x, 1.5))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch()
        x.mul_(2.0)
    torch.cuda.synchronize()
    assert torch.equal(x, torch.full_like(x, 1.5))  # capturing ran nothing
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(x, torch.full_like(x, ((1.5 + 1.5) * 2 + 1.5) * 2))
