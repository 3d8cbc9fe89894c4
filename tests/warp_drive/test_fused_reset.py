"""The one-launch reset of done environments (``fused_reset``) against ``CUDAEnvironmentReset``:
Numba twin in the CUDA simulator, CUDA C compiled with nvcc; GPU runs are in
``test_fused_reset_gpu.py``."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
import torch

from ai_economist.example_envs.tag_continuous import TagContinuous
from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled
from ai_economist.warp_drive.fused_reset import (
    RESET_KERNEL,
    RESET_SOURCE,
    FusedReset,
    _words,
    plan_reset,
)

needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")
SMALL = dict(num_taggers=1, num_runners=3, episode_length=4, num_other_agents_observed=2,
             use_full_observation=False)  # fmt: skip


def scramble(dm, rng: np.random.Generator) -> None:
    """Random values in every per-env array, some envs done, times not zero."""
    for name in dm.reset_snapshot_names() + dm.reset_zero_names():
        t = dm.data_on_device_via_torch(name)
        t.copy_(torch.from_numpy(rng.integers(1, 9, tuple(t.shape)).astype(t.numpy().dtype)))
    dm.data_on_device_via_torch("_done_").copy_(torch.tensor([1, 0, 1, 0], dtype=torch.int32))
    dm.data_on_device_via_torch("_timestep_").copy_(torch.tensor([4, 2, 3, 1], dtype=torch.int32))


def host_copy(dm) -> dict[str, np.ndarray]:
    names = dm.reset_snapshot_names() + dm.reset_zero_names() + ["last_episode_tags"]
    return {n: dm.data_on_device_via_torch(n).numpy().copy() for n in names}


def test_plan_covers_every_reset_array_as_int32_rows():
    w = EnvWrapper(TagContinuous(**SMALL), num_envs=4, env_backend="numpy")
    plan = plan_reset(w.cuda_data_manager)
    assert plan is not None
    assert len(plan.restore) == 10 and len(plan.zero) == 5  # _done_/_timestep_ left out
    obs, snap = plan.restore[-1]  # observations_runner: 3 runners x 15 floats per env
    assert obs.dtype == torch.int32 and tuple(obs.shape) == (4, 45) == tuple(snap.shape)
    assert obs.data_ptr() == w.observations("runner").data_ptr()  # a view, not a copy
    touched = {t.data_ptr() for pair in plan.restore for t in pair} | {
        t.data_ptr() for t in plan.zero
    }
    for tag in ("tagger", "runner"):  # action masks (441 wide) are never written nor reset
        assert w.action_masks(tag).data_ptr() not in touched


def test_rows_that_are_not_whole_words_or_not_contiguous_do_not_fit():
    assert _words(torch.zeros((4, 3), dtype=torch.uint8), 4) is None  # 3 bytes per env
    assert _words(torch.zeros((4, 3), dtype=torch.bool), 4) is None
    assert _words(torch.zeros((3, 4)).t(), 4) is None  # not contiguous
    assert _words(torch.zeros(5), 4) is None  # not (num_envs, ...)
    assert tuple(_words(torch.zeros((4, 3), dtype=torch.float64), 4).shape) == (4, 6)
    assert tuple(_words(torch.zeros((4, 2), dtype=torch.int16), 4).shape) == (4, 1)


@needs_sim
def test_numba_fused_reset_equals_the_torch_reset():
    fused = EnvWrapper(TagContinuous(**SMALL), num_envs=4, env_backend="numba", seed=2)
    torch_ref = EnvWrapper(TagContinuous(**SMALL), num_envs=4, env_backend="numpy", seed=2)
    assert isinstance(fused.backend._fused_reset, FusedReset)
    for w in (fused, torch_ref):
        scramble(w.cuda_data_manager, np.random.default_rng(5))
    before = host_copy(fused.cuda_data_manager)
    fused.reset_only_done_envs()
    CUDAEnvironmentReset(torch_ref.cuda_data_manager).reset_when_done()
    got, want = host_copy(fused.cuda_data_manager), host_copy(torch_ref.cuda_data_manager)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    start = fused.env.initial_state(4, 2)
    np.testing.assert_array_equal(got["loc_x"][[0, 2]], start["loc_x"][[0, 2]])
    np.testing.assert_array_equal(got["loc_x"][[1, 3]], before["loc_x"][[1, 3]])  # not done
    assert (got["rewards_runner"][[0, 2]] == 0).all() and (got["rewards_runner"][1] > 0).all()
    assert fused.done().tolist() == [0, 0, 0, 0]
    assert fused.cuda_data_manager.data_on_device_via_torch("_timestep_").tolist() == [0, 2, 0, 1]


@needs_sim
def test_blocks_of_several_envs_reset_only_their_done_envs(monkeypatch):
    from ai_economist.warp_drive import fused_reset

    monkeypatch.setattr(fused_reset, "RESET_ENVS_PER_BLOCK", 2)  # blocks (0, 1) (2, 3) (4)
    assert fused_reset.reset_grid(5) == (3, 1, 1)
    w = EnvWrapper(TagContinuous(**SMALL), num_envs=5, env_backend="numba", seed=2)
    dm = w.cuda_data_manager
    for name in dm.reset_snapshot_names() + dm.reset_zero_names():
        t = dm.data_on_device_via_torch(name)
        t.copy_(torch.full(tuple(t.shape), 3).to(t.dtype))
    dm.data_on_device_via_torch("_done_").copy_(torch.tensor([0, 1, 0, 0, 1], dtype=torch.int32))
    dm.data_on_device_via_torch("_timestep_").fill_(4)
    w.reset_only_done_envs()
    start = w.env.initial_state(5, 2)
    loc_x = dm.data_on_device_via_torch("loc_x").numpy()
    np.testing.assert_array_equal(loc_x[[1, 4]], start["loc_x"][[1, 4]])
    assert (loc_x[[0, 2, 3]] == 3).all()  # not done: untouched (block 1 has nothing to do)
    assert (dm.data_on_device_via_torch("rewards_runner").numpy()[[1, 4]] == 0).all()
    assert w.done().tolist() == [0] * 5
    assert dm.data_on_device_via_torch("_timestep_").tolist() == [4, 0, 4, 4, 0]


@needs_sim
def test_wrapper_episodes_with_fused_resets_match_the_reference():
    from ai_economist.warp_drive.checks.parity import check_parity

    env = TagContinuous(**{**SMALL, "episode_length": 2})
    result = check_parity(env, "numba", num_envs=3, num_steps=5, seed=4)
    assert result, result.message


def replicated_dm():
    """5 envs: a replicated float32 row and a replicated 3-byte row (shared snapshots), a
    per-env snapshot and a zero-at-reset array, scrambled, envs 1 and 4 done."""
    from ai_economist.warp_drive.data_manager import CUDADataManager, DataFeed

    dm = CUDADataManager(num_agents=2, episode_length=3, num_envs=5, device="cpu")
    feed = DataFeed()
    feed.add_data("level", np.array([1.5, 2.5, 3.5], np.float32), replicate_over_envs=True,
                  save_copy_and_apply_at_reset=True)  # fmt: skip
    feed.add_data("flags", np.array([1, 2, 3], np.int8), replicate_over_envs=True,
                  save_copy_and_apply_at_reset=True)  # fmt: skip
    feed.add_data("own", np.arange(10, dtype=np.int32).reshape(5, 2),
                  save_copy_and_apply_at_reset=True)  # fmt: skip
    feed.add_data("reward", np.zeros((5, 2), np.float32), reset_to_zero=True)
    dm.push_data_to_device(feed)
    for name in ("level", "flags", "own", "reward"):
        dm.data_on_device_via_torch(name).add_(7)
    dm.data_on_device_via_torch("_done_").copy_(torch.tensor([0, 1, 0, 0, 1], dtype=torch.int32))
    dm.data_on_device_via_torch("_timestep_").fill_(3)
    return dm


@needs_sim
def test_shared_snapshot_rows_are_read_for_every_done_env(monkeypatch):
    from ai_economist.warp_drive import fused_reset
    from ai_economist.warp_drive.backend_names import EnvBackend

    monkeypatch.setattr(fused_reset, "RESET_ENVS_PER_BLOCK", 2)  # blocks (0, 1) (2, 3) (4)
    dm, ref = replicated_dm(), replicated_dm()
    plan = plan_reset(dm)
    shapes = {tuple(s.shape) for _, s in plan.restore + plan.restore_bytes}
    assert shapes == {(1, 3), (5, 2)}  # level (1 row of 3 words), own; flags as bytes below
    assert [tuple(s.shape) for _, s in plan.restore_bytes] == [(1, 3)]
    assert FusedReset(dm, EnvBackend.NUMBA, plan)()
    CUDAEnvironmentReset(ref, use_cuda_graph=False).reset_when_done()
    for name in ("level", "flags", "own", "reward", "_done_", "_timestep_"):
        want = ref.data_on_device_via_torch(name).numpy()
        np.testing.assert_array_equal(dm.data_on_device_via_torch(name).numpy(), want, name)
    level = dm.data_on_device_via_torch("level").numpy()
    assert level[1].tolist() == level[4].tolist() == [1.5, 2.5, 3.5]
    assert level[0].tolist() == [8.5, 9.5, 10.5]  # not done: untouched
    assert dm.data_on_device_via_torch("own").numpy()[4].tolist() == [8, 9]


def test_reset_kernel_compiles_for_sm90(nvcc, tmp_path):
    cubin = tmp_path / "reset.cubin"
    cmd = [str(nvcc), "-cubin", "-arch=sm_90", "-o", str(cubin), str(RESET_SOURCE),
           "-Werror", "all-warnings"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert RESET_KERNEL.encode() in cubin.read_bytes()


@needs_sim
def test_one_timed_step_is_two_launches_and_no_torch_reset(monkeypatch):
    # what benchmarks/example_env_step.py times: step_all_envs + reset_only_done_envs
    w = EnvWrapper(TagContinuous(**SMALL), num_envs=2, env_backend="numba", seed=0)
    launches = []
    backend = w.backend
    backend._launches = [lambda f=f: (launches.append("step"), f()) for f in backend._launches]
    inner = backend._fused_reset._launch
    backend._fused_reset._launch = lambda: (launches.append("reset"), inner())

    def no_torch_reset(*args, **kwargs):
        raise AssertionError("the torch reset ran")

    monkeypatch.setattr(CUDAEnvironmentReset, "reset_when_done", no_torch_reset)
    for _ in range(SMALL["episode_length"]):
        w.step_all_envs()
        w.reset_only_done_envs()
    assert launches == ["step", "reset"] * SMALL["episode_length"]
    assert int(w.cuda_data_manager.data_on_device_via_torch("_timestep_")[0]) == 0  # was reset
    for tag in ("tagger", "runner"):  # written once at allocation, right after steps and resets
        assert (w.action_masks(tag) == 1).all()


@needs_sim
def test_arrays_pushed_later_rebuild_the_reset_or_hand_it_to_torch():
    from ai_economist.warp_drive.data_manager import DataFeed

    w = EnvWrapper(TagContinuous(**SMALL), num_envs=4, env_backend="numba", seed=0)
    dm, fused = w.cuda_data_manager, w.backend._fused_reset
    feed = DataFeed()
    feed.add_data("extra_words", np.full((4, 2), 5, np.int32), save_copy_and_apply_at_reset=True)
    dm.push_data_to_device(feed, torch_accessible=True)
    extra = dm.data_on_device_via_torch("extra_words")
    extra.fill_(9)
    dm.data_on_device_via_torch("_done_")[1] = 1
    w.reset_only_done_envs()  # rebuilt with the new array
    assert len(fused.plan.restore) == 11
    assert extra[:, 0].tolist() == [9, 5, 9, 9]
    feed = DataFeed()
    feed.add_data("odd_bytes", np.full((4, 3), 7, np.uint8), save_copy_and_apply_at_reset=True)
    dm.push_data_to_device(feed, torch_accessible=True)
    odd = dm.data_on_device_via_torch("odd_bytes")
    odd.fill_(1)
    dm.data_on_device_via_torch("_done_")[2] = 1
    assert fused()  # rows of 3 bytes: restored byte by byte in the same launch
    assert len(fused.plan.restore_bytes) == 1
    assert odd[:, 0].tolist() == [1, 1, 7, 1] and w.done().tolist() == [0, 0, 0, 0]
    feed = DataFeed()
    feed.add_data("flags", np.ones((4, 3), np.bool_), save_copy_and_apply_at_reset=True)
    dm.push_data_to_device(feed, torch_accessible=True)
    flags = dm.data_on_device_via_torch("flags")
    flags.fill_(False)
    dm.data_on_device_via_torch("_done_")[3] = 1
    assert not fused()  # bool arrays do not fit: no launch
    w.reset_only_done_envs()  # the torch reset instead
    assert flags[:, 0].tolist() == [False, False, False, True] and w.done().sum() == 0


def test_cuda_c_reset_emulated_on_the_cpu_equals_the_torch_reset(tmp_path):
    """The CUDA C kernel compiled by g++ against the COVID-19 tests' CUDA shim (one std::thread
    per CUDA thread), on a plan with shared snapshot rows (words and bytes) and per-env ones."""
    import ctypes
    import shutil
    from pathlib import Path

    from ai_economist.warp_drive.fused_reset import reset_table

    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    here = Path(__file__).resolve().parent
    shim = here.parent / "foundation" / "scenarios" / "covid19" / "cuda_emulation"
    library = tmp_path / "libreset_emu.so"
    cmd = ["g++", "-std=c++20", "-O2", "-shared", "-fPIC", "-pthread", "-w",
           f'-DRESET_SOURCE="{RESET_SOURCE}"', "-I", str(shim),
           str(here / "reset_emulation" / "reset_emu.cpp"), "-o", str(library)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    dm, ref = replicated_dm(), replicated_dm()
    plan = plan_reset(dm)
    rows = reset_table(plan)
    assert sorted(row[4] for row in rows) == [0, 0, 1, 1]  # level and flags share one row
    table = torch.tensor([v for row in rows for v in row], dtype=torch.int64)
    emu = ctypes.CDLL(str(library)).emu_reset
    emu.argtypes = [ctypes.c_void_p, *[ctypes.c_int] * 3, ctypes.c_void_p, ctypes.c_void_p,
                    ctypes.c_int, ctypes.c_int]  # fmt: skip
    emu(table.data_ptr(), len(rows), 5, 2, plan.done.data_ptr(), plan.timestep.data_ptr(), 3, 8)
    CUDAEnvironmentReset(ref, use_cuda_graph=False).reset_when_done()
    for name in ("level", "flags", "own", "reward", "_done_", "_timestep_"):
        want = ref.data_on_device_via_torch(name).numpy()
        np.testing.assert_array_equal(dm.data_on_device_via_torch(name).numpy(), want, name)
    assert dm.data_on_device_via_torch("flags").numpy()[4].tolist() == [1, 2, 3]
