"""CUDAEnvironmentReset on torch CPU tensors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, CUDADataManager  # noqa: E402
from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset  # noqa: E402
from ai_economist.warp_drive.state import StateField, StateSpec  # noqa: E402

E, N, L = 4, 3, 6


def setup():
    dm = CUDADataManager(N, L, E, device="cpu")
    spec = StateSpec(
        [
            StateField("stock", np.float32, ("episode_length + 1", "num_agents")),
            StateField("level", np.int32, ("num_agents",)),
            StateField("reward", np.float32, ("num_agents",), reset="zeros"),
            StateField("scratch", np.float32, ("num_agents",), reset="none"),
            StateField("const", np.float32, ("num_agents",), per_env=False),
        ]
    ).resolve({"num_agents": N, "episode_length": L})
    stock0 = np.random.default_rng(0).random((L + 1, N)).astype(np.float32)
    spec.allocate(dm, {"stock": stock0, "level": [1, 2, 3], "const": [7, 8, 9]})
    # every env drifts away from its reset state
    for name in ("stock", "level", "reward", "scratch", "const"):
        dm.data_on_device_via_torch(name).add_(5)
    dm.data_on_device_via_torch(TIMESTEP).fill_(4)
    return dm, stock0


def test_if_done_resets_only_done_envs():
    dm, stock0 = setup()
    dm.data_on_device_via_torch(DONE).copy_(torch.tensor([1, 0, 1, 0], dtype=torch.int32))
    resetter = CUDAEnvironmentReset(dm)
    resetter.reset_when_done(mode="if_done")
    stock = dm.pull_data_from_device("stock")
    level = dm.pull_data_from_device("level")
    for env in range(E):
        done = env in (0, 2)
        np.testing.assert_array_equal(stock[env], stock0 if done else stock0 + 5)
        assert level[env].tolist() == ([1, 2, 3] if done else [6, 7, 8])
        assert dm.pull_data_from_device("reward")[env].tolist() == [0.0 if done else 5.0] * N
    assert dm.pull_data_from_device("scratch").tolist() == [[5.0] * N] * E
    assert dm.pull_data_from_device("const").tolist() == [12, 13, 14]
    assert dm.pull_data_from_device(TIMESTEP).tolist() == [0, 4, 0, 4]
    assert dm.pull_data_from_device(DONE).tolist() == [0, 0, 0, 0]
    # a second call with nothing done changes nothing; the snapshot itself is untouched
    before = dm.pull_data_from_device("stock")
    resetter.reset_when_done()
    np.testing.assert_array_equal(dm.pull_data_from_device("stock"), before)
    # one env's values were pushed (replicated): every env resets to one shared row
    assert dm.snapshot_is_shared("stock") and tuple(dm.snapshot("stock").shape) == (1, L + 1, N)
    np.testing.assert_array_equal(dm.snapshot("stock").numpy()[0], stock0)


def test_force_reset_resets_all_envs():
    dm, stock0 = setup()
    CUDAEnvironmentReset(dm).reset_when_done(dm, mode="force_reset")
    np.testing.assert_array_equal(dm.pull_data_from_device("stock"), np.stack([stock0] * E))
    assert dm.pull_data_from_device("level").tolist() == [[1, 2, 3]] * E
    assert dm.pull_data_from_device("reward").sum() == 0
    assert dm.pull_data_from_device(TIMESTEP).tolist() == [0] * E
    assert dm.pull_data_from_device("scratch").tolist() == [[5.0] * N] * E


def test_arrays_pushed_after_construction_are_reset_and_tensors_are_not_replaced():
    dm, _ = setup()
    resetter = CUDAEnvironmentReset(dm)
    resetter.reset_when_done()
    spec = StateSpec([StateField("late", np.float32, ("num_agents",))]).resolve({"num_agents": N})
    spec.allocate(dm, {"late": [1, 1, 1]})
    live = dm.data_on_device_via_torch("late")
    live.mul_(3)
    dm.data_on_device_via_torch(DONE)[3] = 1
    resetter.reset_when_done()
    assert dm.data_on_device_via_torch("late") is live
    assert live.tolist() == [[3.0] * N] * 3 + [[1.0] * N]


def test_bad_mode():
    dm, _ = setup()
    with pytest.raises(ValueError, match="if_done"):
        CUDAEnvironmentReset(dm).reset_when_done(mode="sometimes")
