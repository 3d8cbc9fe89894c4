"""The one-launch reset (``fused_reset``) on a GPU: pycuda (CUDA C) and Numba equal the torch
``CUDAEnvironmentReset``. Run on the GPU machine:
``python -m pytest -m gpu tests/warp_drive/test_fused_reset_gpu.py``."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import require_gpu

from ai_economist.example_envs.tag_continuous import TagContinuous
from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.fused_reset import FusedReset

pytestmark = pytest.mark.gpu
torch = require_gpu()

ENV = dict(num_taggers=3, num_runners=40, num_other_agents_observed=10, use_full_observation=False)


NUM_ENVS = 75  # blocks of 32 envs: two whole ones (the second with none done), one of 11


def scrambled(backend: str) -> EnvWrapper:
    w = EnvWrapper(
        TagContinuous(**ENV), num_envs=NUM_ENVS, env_backend=backend, device="cuda", seed=1
    )
    dm = w.cuda_data_manager
    gen = torch.Generator(device="cuda").manual_seed(3)
    for name in dm.reset_snapshot_names() + dm.reset_zero_names():
        t = dm.data_on_device_via_torch(name)
        t.copy_(torch.randint(1, 9, t.shape, generator=gen, device="cuda").to(t.dtype))
    done = torch.randint(0, 2, (NUM_ENVS,), generator=gen, device="cuda").to(torch.int32)
    done[32:64] = 0  # a block with nothing to reset returns at once
    dm.data_on_device_via_torch("_done_").copy_(done)
    dm.data_on_device_via_torch("_timestep_").fill_(7)
    return w


def state(w: EnvWrapper) -> dict[str, np.ndarray]:
    dm = w.cuda_data_manager
    names = dm.reset_snapshot_names() + dm.reset_zero_names() + ["_done_", "_timestep_"]
    return {n: w.pull(n) for n in names}


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
def test_fused_reset_equals_the_torch_reset(backend):
    fused, ref = scrambled(backend), scrambled(backend)
    assert isinstance(fused.backend._fused_reset, FusedReset)
    done = fused.done().clone()
    assert 0 < int(done[:32].sum()) < 32 and 0 < int(done[64:].sum()) < NUM_ENVS - 64
    for _ in range(2):  # the second call finds nothing done
        fused.reset_only_done_envs()
    CUDAEnvironmentReset(ref.cuda_data_manager, use_cuda_graph=False).reset_when_done()
    torch.cuda.synchronize()
    got, want = state(fused), state(ref)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    timestep = got["_timestep_"]
    assert (timestep[done.cpu().numpy() == 1] == 0).all()
    assert (timestep[done.cpu().numpy() == 0] == 7).all()


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
def test_shared_snapshots_reset_every_done_env_to_their_one_row(backend):
    from ai_economist.warp_drive.backend_names import EnvBackend
    from ai_economist.warp_drive.data_manager import CUDADataManager, DataFeed
    from ai_economist.warp_drive.fused_reset import plan_reset

    def build() -> CUDADataManager:
        dm = CUDADataManager(num_agents=2, episode_length=3, num_envs=NUM_ENVS, device="cuda")
        feed = DataFeed()  # words and bytes rows shared by every env, one per-env snapshot
        for name, row in (
            ("level", np.arange(5, dtype=np.float32)),
            ("flags", np.arange(3, dtype=np.int8)),
        ):
            feed.add_data(name, row, replicate_over_envs=True, save_copy_and_apply_at_reset=True)
        feed.add_data("own", np.arange(2 * NUM_ENVS, dtype=np.int32).reshape(NUM_ENVS, 2),
                      save_copy_and_apply_at_reset=True)  # fmt: skip
        dm.push_data_to_device(feed)
        for name in ("level", "flags", "own"):
            dm.data_on_device_via_torch(name).add_(7)
        done = torch.zeros(NUM_ENVS, dtype=torch.int32, device="cuda")
        done[[0, 5, 31, 70, 74]] = 1
        dm.data_on_device_via_torch("_done_").copy_(done)
        return dm

    dm, ref = build(), build()
    assert all(dm.snapshot_is_shared(n) for n in ("level", "flags"))
    assert FusedReset(dm, EnvBackend(backend), plan_reset(dm))()
    CUDAEnvironmentReset(ref, use_cuda_graph=False).reset_when_done()
    torch.cuda.synchronize()
    for name in ("level", "flags", "own", "_done_", "_timestep_"):
        got, want = dm.pull_data_from_device(name), ref.pull_data_from_device(name)
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert dm.pull_data_from_device("level")[74].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
