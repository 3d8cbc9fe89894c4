"""StateField / StateSpec: dims, allocation, kernel arguments, C signatures (torch on the CPU)."""

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai_economist.warp_drive.data_manager import CUDADataManager  # noqa: E402
from ai_economist.warp_drive.state import (  # noqa: E402
    StateField,
    StateSpec,
    check_kernel_signature,
    numba_arg,
    parse_kernel_parameters,
    pycuda_arg,
)

DATA = Path(__file__).parent / "data"


def tiny_spec() -> StateSpec:
    return StateSpec(
        [
            StateField("state", np.float32, ("num_agents",), doc="per-agent value"),
            StateField("weights", np.float32, ("num_agents",), per_env=False),
            StateField("num_agents_c", np.int32, (), per_env=False, c_name="kNumAgents"),
            StateField("_done_", np.int32, (), c_name="done"),
            StateField("_timestep_", np.int32, (), c_name="timestep"),
            StateField(
                "history", np.float32, ("episode_length + 1", "num_agents"), kernel_arg=False
            ),
            StateField("scratch", np.int32, ("2 * num_agents",), reset="none", kernel_arg=False),
            StateField("counter", np.int32, (), reset="zeros", kernel_arg=False),
        ]
    )


DIMS = {"num_agents": 4, "episode_length": 3}


def test_resolve_symbolic_dims():
    spec = tiny_spec().resolve(DIMS)
    assert spec["history"].shape == (4, 4)
    assert spec["scratch"].shape == (8,)
    assert spec["state"].doc == "per-agent value"
    assert tiny_spec()["history"].shape == ("episode_length + 1", "num_agents")  # unchanged
    with pytest.raises(KeyError, match="num_agnts.*num_agents"):
        StateField("x", np.float32, ("num_agnts",)).resolve(DIMS)
    with pytest.raises(ValueError, match="Unsupported dimension"):
        StateField("x", np.float32, ("num_agents ** 2",)).resolve(DIMS)


def test_field_validation():
    with pytest.raises(TypeError, match="no kernel type"):
        StateField("x", np.complex64, (2,))
    with pytest.raises(ValueError, match="reset must be"):
        StateField("x", np.float32, (2,), reset="sometimes")
    with pytest.raises(ValueError, match="never reset"):
        StateField("x", np.float32, (2,), per_env=False, reset="zeros")
    assert StateField("x", np.float32, (2,), per_env=False).reset == "none"
    with pytest.raises(ValueError, match="Duplicate"):
        StateSpec([StateField("x", np.float32), StateField("x", np.int32)])
    with pytest.raises(ValueError, match="valid C identifier"):
        StateField("x", np.float32, c_name="not-valid")


def test_allocate_and_kernel_args_torch():
    spec = tiny_spec().resolve(DIMS)
    dm = CUDADataManager(4, 3, num_envs=2, device="cpu")
    init = np.arange(4, dtype=np.float64)  # same_kind cast to float32
    spec.allocate(dm, {"state": init, "weights": [1, 2, 3, 4], "num_agents_c": 4}, num_envs=2)
    assert dm.get_shape("state") == (2, 4) and dm.get_dtype("state") == np.float32
    assert dm.get_shape("weights") == (4,) and not dm.is_per_env("weights")
    assert dm.get_shape("history") == (2, 4, 4)
    assert dm.scalar_value("num_agents_c") == np.int32(4)
    assert dm.reset_snapshot_names() == ["state", "history"]
    assert dm.reset_zero_names() == ["counter"]
    args = spec.kernel_args(dm, backend="torch")
    assert [type(a).__name__ for a in args] == ["Tensor", "Tensor", "int32", "Tensor", "Tensor"]
    assert args[3] is dm.data_on_device_via_torch("_done_")
    without_scalars = spec.kernel_args(dm, backend="torch", scalars="defines")
    assert len(without_scalars) == 4
    assert spec.defines(dm) == {"kNumAgents": 4}
    assert spec.defines({"num_agents_c": 7}) == {"kNumAgents": 7}
    subset = spec.kernel_args(dm, names=["weights", "state"], backend="torch")
    assert subset[0] is dm.data_on_device_via_torch("weights")


def test_allocate_errors():
    spec = tiny_spec().resolve(DIMS)
    dm = CUDADataManager(4, 3, num_envs=2, device="cpu")
    with pytest.raises(KeyError, match="stat.*'state'"):
        spec.allocate(dm, {"stat": np.zeros(4)})
    with pytest.raises(ValueError, match="does not match the declared shape"):
        spec.allocate(dm, {"state": np.zeros(5)})
    with pytest.raises(TypeError, match="cannot store float64 values as int32"):
        spec.allocate(dm, {"scratch": np.zeros(8)})
    with pytest.raises(ValueError, match="differs"):
        spec.allocate(dm, {}, num_envs=3)
    with pytest.raises(ValueError, match="Unresolved"):
        tiny_spec().allocate(dm, {})
    with pytest.raises(ValueError, match="built-in"):
        StateSpec([StateField("_done_", np.float32, ())]).allocate(dm, {})


def test_c_declarations_match_cuda_source():
    spec = tiny_spec().resolve(DIMS)
    decls = spec.c_declarations()
    assert decls == [
        "float* state",
        "const float* weights",
        "const int kNumAgents",
        "int* done",
        "int* timestep",
    ]
    source = (DATA / "tiny_kernel.cu").read_text()
    assert parse_kernel_parameters(source, "CudaTinyStep") == decls
    check_kernel_signature(source, "CudaTinyStep", spec)
    assert "const float* weights,\n    const int kNumAgents" in spec.c_parameter_list()
    with pytest.raises(ValueError, match="5 parameters in the kernel, 2 declared"):
        check_kernel_signature(source, "CudaTinyStep", spec, names=["state", "weights"])


def test_signature_mismatch_is_reported():
    src = """
    // a comment mentioning CudaK(float* y)
    extern "C" __global__ void CudaK(float *x, int * __restrict__ n, const int kN) {}
    """
    good = StateSpec([StateField("x", np.float32), StateField("n", np.int32),
                      StateField("kN", np.int32, per_env=False)])  # fmt: skip
    check_kernel_signature(src, "CudaK", good)
    bad = StateSpec([StateField("x", np.int32), StateField("n", np.int32),
                     StateField("kN", np.int32, per_env=False)])  # fmt: skip
    with pytest.raises(ValueError, match="#0: kernel has 'float\\* x', spec declares 'int\\* x'"):
        check_kernel_signature(src, "CudaK", bad)
    renamed = StateSpec([StateField("x", np.float32), StateField("m", np.int32),
                         StateField("kN", np.int32, per_env=False)])  # fmt: skip
    check_kernel_signature(src, "CudaK", renamed, check_names=False)
    with pytest.raises(ValueError, match="#1"):
        check_kernel_signature(src, "CudaK", renamed)
    consts = StateSpec([StateField("x", np.float32, (3,), per_env=False), StateField("n", np.int32),
                        StateField("kN", np.int32, per_env=False)])  # fmt: skip
    check_kernel_signature(src, "CudaK", consts, ignore_const=True)
    with pytest.raises(ValueError, match="No __global__ kernel"):
        parse_kernel_parameters(src, "Missing")


def test_arg_converters_on_cpu():
    t = torch.zeros(3)
    with pytest.raises(TypeError, match="CUDA tensors"):
        pycuda_arg(t)
    with pytest.raises(TypeError, match="numpy arrays"):
        pycuda_arg(np.zeros(3))
    assert pycuda_arg(3).dtype == np.int32 and pycuda_arg(True).dtype == np.int32
    assert pycuda_arg(0.5).dtype == np.float32
    assert pycuda_arg(np.float64(0.5)).dtype == np.float64
    assert numba_arg(7) == 7


def test_numba_arg_simulator_view(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    t = torch.zeros(3)
    view = numba_arg(t)
    view[1] = 5.0
    assert t[1].item() == 5.0
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    with pytest.raises(TypeError, match="NUMBA_ENABLE_CUDASIM=1"):
        numba_arg(t)


def test_per_env_scalar_fields_stay_scalar_per_env():
    """A per-env field of shape () holds one value per env, replicated or given per env."""
    spec = StateSpec([StateField("level", np.float32, (), reset="snapshot")])
    dm = CUDADataManager(4, 3, num_envs=3, device="cpu")
    spec.allocate(dm, {"level": 2.5})
    assert dm.get_shape("level") == (3,)
    np.testing.assert_array_equal(dm.pull_data_from_device("level"), [2.5, 2.5, 2.5])
    dm_batched = CUDADataManager(4, 3, num_envs=3, device="cpu")
    spec.allocate(dm_batched, {"level": np.array([1.0, 2.0, 3.0])}, batched=True)
    np.testing.assert_array_equal(dm_batched.pull_data_from_device("level"), [1.0, 2.0, 3.0])
