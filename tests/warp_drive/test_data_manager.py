"""DataFeed and CUDADataManager with torch on the CPU."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai_economist.warp_drive.data_manager import (  # noqa: E402
    DONE,
    TIMESTEP,
    CUDADataManager,
    DataFeed,
)
from ai_economist.warp_drive.errors import DeviceMemoryError  # noqa: E402


def make_dm(num_envs=3, **kw) -> CUDADataManager:
    return CUDADataManager(num_agents=4, episode_length=5, num_envs=num_envs, device="cpu", **kw)


def test_data_feed_layout():
    feed = DataFeed()
    feed.add_data("x", np.zeros(3), save_copy_and_apply_at_reset=True, extra="yes")
    feed.add_data_list([("y", 1), ("z", np.ones(2), False, True)])
    assert feed["x"]["attributes"] == {
        "save_copy_and_apply_at_reset": True,
        "log_data_across_episode": False,
        "extra": "yes",
    }
    assert feed["z"]["attributes"]["log_data_across_episode"] is True
    with pytest.raises(ValueError, match="already added"):
        feed.add_data("x", 1)
    with pytest.raises(ValueError, match="expects tuples"):
        feed.add_data_list([("only_name",)])
    with pytest.raises(ValueError, match="non-empty"):
        feed.add_data("", 1)


def test_builtins_and_meta():
    dm = make_dm()
    for name in (DONE, TIMESTEP):
        assert dm.get_shape(name) == (3,) and dm.get_dtype(name) == np.int32
        assert dm.is_data_on_device(name)
    assert dm.meta_info("n_agents") == 4 == dm.meta_info("num_agents")
    assert dm.meta_info("episode_length") == 5 and dm.meta_info("num_envs") == 3
    dm.add_meta_info({"seed": 7})
    assert dm.meta_info("seed") == 7
    with pytest.raises(KeyError, match="episode_lenght.*'episode_length'"):
        dm.meta_info("episode_lenght")
    assert dm.device.type == "cpu"


def test_push_pull_constants_and_per_env():
    dm = make_dm()
    feed = DataFeed()
    per_env = np.arange(12, dtype=np.float64).reshape(3, 4)
    feed.add_data("obs", per_env, save_copy_and_apply_at_reset=True)
    feed.add_data("const", np.array([1, 2, 3, 4], dtype=np.int64))
    feed.add_data("one_env", np.array([1.5, 2.5], np.float32), replicate_over_envs=True)
    feed.add_data("gamma", 0.25)
    feed.add_data("k", 3)
    feed.add_data("flag", True)
    dm.push_data_to_device(feed, torch_accessible=True)

    assert dm.get_dtype("obs") == np.float32  # float64 downcast
    assert dm.get_dtype("const") == np.int32
    np.testing.assert_array_equal(dm.pull_data_from_device("obs"), per_env.astype(np.float32))
    assert dm.is_per_env("obs") and not dm.is_per_env("const")
    assert dm.get_shape("one_env") == (3, 2) and dm.is_per_env("one_env")
    np.testing.assert_array_equal(dm.pull_data_from_device("one_env")[2], [1.5, 2.5])
    assert dm.scalar_value("gamma") == np.float32(0.25) and dm.get_dtype("gamma") == np.float32
    assert dm.device_data("k") == 3 and dm.get_dtype("k") == np.int32 and dm.is_scalar("k")
    assert dm.scalar_value("flag") == 1 and dm.get_shape("flag") == ()
    assert dm.pull_data_from_device("gamma") == np.float32(0.25)
    assert dm.reset_snapshot_names() == ["obs"]
    assert dm.get_attributes("obs")["torch_accessible"] is True

    # the pushed tensor does not alias the caller's host array, and pulls are copies
    per_env[0, 0] = 99
    assert dm.data_on_device_via_torch("obs")[0, 0].item() == 0
    pulled = dm.pull_data_from_device("obs")
    pulled[:] = -1
    assert dm.data_on_device_via_torch("obs")[0, 0].item() == 0
    # the snapshot is separate from the live array
    dm.data_on_device_via_torch("obs").add_(1)
    assert dm.snapshot("obs")[0, 1].item() == 1
    dm.update_snapshot()
    assert dm.snapshot("obs")[0, 1].item() == 2
    assert dm.memory_bytes() > 0


def test_a_replicated_snapshot_is_one_shared_row_until_updated():
    dm = make_dm()  # 3 envs
    feed = DataFeed()
    feed.add_data("level", np.array([1.0, 2.0], np.float32), replicate_over_envs=True,
                  save_copy_and_apply_at_reset=True)  # fmt: skip
    feed.add_data("own", np.zeros((3, 2), np.float32), save_copy_and_apply_at_reset=True)
    dm.push_data_to_device(feed)
    assert dm.snapshot_is_shared("level") and not dm.snapshot_is_shared("own")
    assert tuple(dm.snapshot("level").shape) == (1, 2) and tuple(dm.snapshot("own").shape) == (3, 2)
    # live arrays: 2 x (3 x 2 floats) + _done_ and _timestep_; snapshots: 1 x 2 + 3 x 2 floats
    assert dm.memory_bytes() == 4 * (2 * 6 + 2 * 3) + 4 * (2 + 6)
    level = dm.data_on_device_via_torch("level")
    level[1] += 5  # envs differ now: the snapshot becomes per env, and the version moves on
    version = dm.version
    dm.update_snapshot(["level"])
    assert not dm.snapshot_is_shared("level") and dm.version == version + 1
    assert dm.snapshot("level").tolist() == [[1.0, 2.0], [6.0, 7.0], [1.0, 2.0]]
    level[0] += 1  # and is its own copy
    assert dm.snapshot("level")[0, 0].item() == 1.0


def test_the_memory_check_counts_a_shared_snapshot_once():
    dm = make_dm(num_envs=100)
    dm._available_device_memory = lambda: 50_000
    feed = DataFeed()  # 400 B per env live; the snapshot is one row: 400 B in all
    feed.add_data("state", np.zeros(100, np.float32), replicate_over_envs=True,
                  save_copy_and_apply_at_reset=True)  # fmt: skip
    dm.push_data_to_device(feed)  # 40.4 kB fits (a per-env snapshot would need 80 kB)
    assert dm.snapshot_is_shared("state")


def test_keep_64bit():
    dm = make_dm(downcast_64bit=False)
    feed = DataFeed()
    feed.add_data("x", np.zeros(3))
    feed.add_data("y", np.zeros(3), downcast_64bit=True)
    dm.push_data_to_device(feed)
    assert dm.get_dtype("x") == np.float64 and dm.get_dtype("y") == np.float32


def test_errors():
    dm = make_dm()
    feed = DataFeed()
    feed.add_data("susceptible", np.zeros((3, 2), np.float32))
    dm.push_data_to_device(feed)
    with pytest.raises(KeyError, match="Did you mean 'susceptible'"):
        dm.data_on_device_via_torch("suscepTible")
    with pytest.raises(KeyError, match="Unknown device data"):
        dm.pull_data_from_device("nothing_like_it")
    with pytest.raises(ValueError, match="pushing twice is not allowed"):
        dm.push_data_to_device(feed)
    with pytest.raises(TypeError, match="scalar constant"):
        bad = DataFeed()
        bad.add_data("c", 1.0)
        dm.push_data_to_device(bad)
        dm.data_on_device_via_torch("c")
    for data in (np.array(["a", "b"]), np.zeros(2, np.complex64), np.array([None])):
        bad = DataFeed()
        bad.add_data("bad", data)
        with pytest.raises(TypeError, match="not supported on the device"):
            dm.push_data_to_device(bad)
    bad = DataFeed()
    bad.add_data("r", np.zeros(4), save_copy_and_apply_at_reset=True)
    with pytest.raises(ValueError, match="leading dimension of num_envs=3"):
        dm.push_data_to_device(bad)
    bad = DataFeed()
    bad.add_data("big", np.array([2**40]))
    with pytest.raises(OverflowError):
        dm.push_data_to_device(bad)
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        CUDADataManager(4, 5, 0, device="cpu")


def test_push_is_all_or_nothing():
    dm = make_dm()
    feed = DataFeed()
    feed.add_data("good", np.zeros(3))
    feed.add_data("bad", np.zeros(2, np.complex64))
    with pytest.raises(TypeError):
        dm.push_data_to_device(feed)
    assert "good" not in dm


def test_memory_check_reports_how_many_envs_fit():
    dm = make_dm(num_envs=100)
    dm._available_device_memory = lambda: 90_000  # pretend to be a small GPU
    feed = DataFeed()
    # 400 B per env live + 400 B snapshot = 800 B per env -> 80 kB for 100 envs; const 4 kB
    feed.add_data("state", np.zeros((100, 100), np.float32), save_copy_and_apply_at_reset=True)
    feed.add_data("table", np.zeros(1000, np.float32))
    dm.push_data_to_device(feed)  # 84 kB fits
    feed2 = DataFeed()
    feed2.add_data("more", np.zeros(250, np.float32), replicate_over_envs=True)  # +100 kB
    with pytest.raises(DeviceMemoryError, match=r"At most 90 envs would fit") as info:
        dm.push_data_to_device(feed2)
    assert "only 87.9 KiB are free" in str(info.value)
    assert "more" not in dm
    assert isinstance(info.value, MemoryError)
