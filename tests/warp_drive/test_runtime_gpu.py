"""The GPU runtime on a real GPU: pycuda and numba kernels on torch tensors, device reset,
the out-of-memory message. Run on the device machine with ``pytest -m gpu``."""

import math
import time
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import require_gpu

pytestmark = pytest.mark.gpu

torch = require_gpu()

from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, CUDADataManager, DataFeed  # noqa: E402
from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset  # noqa: E402
from ai_economist.warp_drive.errors import DeviceMemoryError, cudasim_enabled  # noqa: E402
from ai_economist.warp_drive.function_manager import (  # noqa: E402
    CUDAFunctionManager,
    NumbaFunctionManager,
)
from ai_economist.warp_drive.state import StateField, StateSpec, check_kernel_signature  # noqa: E402

DATA = Path(__file__).parent / "data"
E, N, L = 1000, 52, 3


def cuda_spec() -> StateSpec:
    return StateSpec(
        [
            StateField("state", np.float32, ("num_agents",)),
            StateField("weights", np.float32, ("num_agents",), per_env=False),
            StateField("num_agents_c", np.int32, (), per_env=False, c_name="kNumAgents"),
            StateField("_done_", np.int32, (), c_name="done"),
            StateField("_timestep_", np.int32, (), c_name="timestep"),
        ]
    ).resolve({"num_agents": N})


def make_state():
    dm = CUDADataManager(N, L, E)  # device "cuda" by default
    spec = cuda_spec()
    init = np.linspace(-1, 1, N, dtype=np.float32)
    weights = np.arange(N, dtype=np.float32) / N
    spec.allocate(dm, {"state": init, "weights": weights, "num_agents_c": N})
    return dm, spec, init, weights


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AI_ECONOMIST_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_pycuda_kernel_updates_torch_tensors_and_reset(cache):
    dm, spec, init, weights = make_state()
    resetter = CUDAEnvironmentReset(dm)
    resetter.reset_when_done()  # nothing is done yet: a no-op that captures the CUDA graph
    assert resetter._graph is not None
    check_kernel_signature((DATA / "tiny_kernel.cu").read_text(), "CudaTinyStep", spec)
    fm = CUDAFunctionManager(N, E)
    cubin = fm.compile_and_load_cuda(
        DATA / "tiny_kernel.cu", defines={"kEpisodeLength": 2, "SCALE": 0.5}
    )
    assert cubin.parent == cache / "cuda"
    fm.initialize_functions(["CudaTinyStep"])
    with pytest.raises(KeyError, match="CudaTinyStep"):
        fm.get_function("CudaTinyStp")
    args = spec.kernel_args(dm, backend="pycuda")
    fm.launch("CudaTinyStep", *args)
    step = fm.bind("CudaTinyStep", *spec.kernel_args(dm, backend="torch"))
    step()
    torch.cuda.synchronize()
    expected = init + 2 * 0.5 * weights
    state = dm.data_on_device_via_torch("state")
    assert state.is_cuda
    np.testing.assert_allclose(state.cpu().numpy(), np.broadcast_to(expected, (E, N)), rtol=1e-6)
    assert dm.pull_data_from_device(DONE).tolist() == [1] * E
    assert dm.pull_data_from_device(TIMESTEP).tolist() == [2] * E

    # reset only the even envs; nothing may synchronise with the host
    done = dm.data_on_device_via_torch(DONE)
    done[1::2] = 0
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        resetter.reset_when_done(mode="if_done")
    finally:
        torch.cuda.set_sync_debug_mode("default")
    state = dm.pull_data_from_device("state")
    np.testing.assert_array_equal(state[0::2], np.broadcast_to(init, (E // 2, N)))
    np.testing.assert_array_equal(state[1::2], np.broadcast_to(state[1], (E // 2, N)))
    assert not np.array_equal(state[1], init)
    ts = dm.pull_data_from_device(TIMESTEP)
    assert ts[0::2].tolist() == [0] * (E // 2) and ts[1::2].tolist() == [2] * (E // 2)
    assert dm.pull_data_from_device(DONE).sum() == 0

    # the second load of the same source is a cache hit
    assert (
        CUDAFunctionManager(N, E).compile_and_load_cuda(
            DATA / "tiny_kernel.cu", defines={"kEpisodeLength": 2, "SCALE": 0.5}
        )
        == cubin
    )


@pytest.mark.parametrize("use_graph", [False, True])
def test_reset_graph_matches_eager_and_recaptures_after_push(use_graph):
    dm, spec, init, weights = make_state()
    resetter = CUDAEnvironmentReset(dm, use_cuda_graph=use_graph)
    state = dm.data_on_device_via_torch("state")
    done = dm.data_on_device_via_torch(DONE)
    for round_ in range(3):
        state.add_(1.0)
        done.copy_((torch.arange(E, device="cuda") % 3 == round_).int())
        resetter.reset_when_done()
        if round_ == 1:  # a new per-env array after the graph was captured
            late = StateSpec([StateField("late", np.int32, ("num_agents",), reset="zeros")])
            late.resolve({"num_agents": N}).allocate(dm, {"late": np.ones(N, np.int32)})
    host = dm.pull_data_from_device("state")
    # env e was last reset in round e % 3 (rounds 0..2), then incremented 2 - e % 3 times
    for e in (0, 1, 2, 3, E - 1):
        np.testing.assert_allclose(host[e], init + (2 - e % 3), rtol=1e-6)
    late = dm.pull_data_from_device("late")
    assert late[2::3].sum() == 0 and late[0::3].min() == 1 and late[1::3].min() == 1
    assert (resetter._graph is not None) == use_graph


def test_numba_kernel_on_device_tensors():
    if cudasim_enabled():
        pytest.skip("NUMBA_ENABLE_CUDASIM=1 is set; this test needs the real GPU")
    pytest.importorskip("numba")
    dm = CUDADataManager(N, L, E)
    spec = StateSpec(
        [
            StateField("state", np.float32, ("num_agents",)),
            StateField("weights", np.float32, ("num_agents",), per_env=False),
            StateField("scale", np.float32, (), per_env=False),
            StateField("_done_", np.int32, ()),
            StateField("_timestep_", np.int32, ()),
            StateField("episode_length", np.int32, (), per_env=False),
        ]
    ).resolve({"num_agents": N})
    init = np.ones(N, np.float32)
    weights = np.arange(N, dtype=np.float32)
    spec.allocate(dm, {"state": init, "weights": weights, "scale": 2.0, "episode_length": 1})
    nfm = NumbaFunctionManager(N, E)
    nfm.load_module(DATA / "tiny_numba_kernels.py")
    nfm.launch("tiny_step", *spec.kernel_args(dm, backend="numba"))
    torch.cuda.synchronize()
    np.testing.assert_allclose(
        dm.pull_data_from_device("state"), np.broadcast_to(init + 2 * weights, (E, N))
    )
    assert dm.pull_data_from_device(DONE).tolist() == [1] * E


def test_memory_error_says_how_many_envs_fit():
    free, _ = torch.cuda.mem_get_info()
    per_env = 64 * 2**20
    num_envs = math.ceil(free / per_env) + 1000
    dm = CUDADataManager(4, 10, num_envs)
    feed = DataFeed()
    feed.add_data("huge", np.zeros(per_env // 4, np.float32), replicate_over_envs=True)
    with pytest.raises(DeviceMemoryError, match=r"At most \d+ envs would fit") as info:
        dm.push_data_to_device(feed)
    fit = int(str(info.value).split("At most ")[1].split()[0])
    assert 0 < fit < num_envs - 900
    assert "huge" not in dm


def _per_call_us(fn, n=2000) -> float:
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def test_launch_overhead_report(cache, capsys):
    dm, spec, _, _ = make_state()
    fm = CUDAFunctionManager(N, E)
    fm.compile_and_load_cuda(DATA / "tiny_kernel.cu", defines={"kEpisodeLength": 10**9})
    args = spec.kernel_args(dm, backend="pycuda")
    bound = _per_call_us(fm.bind("CudaTinyStep", *args))
    launch = _per_call_us(lambda: fm.launch("CudaTinyStep", *args))
    resetter = CUDAEnvironmentReset(dm)
    reset = _per_call_us(resetter.reset_when_done, n=500)
    eager = _per_call_us(CUDAEnvironmentReset(dm, use_cuda_graph=False).reset_when_done, n=500)
    lines = [
        f"pycuda bound launch {bound:.1f} us, launch() {launch:.1f} us",
        f"reset (graph) {reset:.1f} us, reset (eager) {eager:.1f} us",
    ]
    if not cudasim_enabled():
        nfm = NumbaFunctionManager(N, E)
        nfm.load_module(DATA / "tiny_numba_kernels.py")
        nargs = [
            dm.data_on_device_via_torch("state"),
            dm.data_on_device_via_torch("weights"),
            np.float32(1.0),
            dm.data_on_device_via_torch(DONE),
            dm.data_on_device_via_torch(TIMESTEP),
            np.int32(10**9),
        ]
        nb_bound = _per_call_us(nfm.bind("tiny_step", *nargs), n=500)
        nb_launch = _per_call_us(lambda: nfm.launch("tiny_step", *nargs), n=500)
        lines.append(f"numba bound launch {nb_bound:.1f} us, launch() {nb_launch:.1f} us")
    with capsys.disabled():
        print(f"\n[{E} envs x {N} agents] " + "; ".join(lines))
    assert bound < 1000
