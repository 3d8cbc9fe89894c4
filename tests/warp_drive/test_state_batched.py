"""StateSpec.allocate with per-env initial values (``batched=True``)."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.warp_drive.data_manager import CUDADataManager
from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset
from ai_economist.warp_drive.state import StateField, StateSpec

SPEC = StateSpec(
    [
        StateField("_done_", np.int32),
        StateField("x", np.float32, (2,)),
        StateField("k", np.int32, per_env=False),
    ]
)


def test_each_env_keeps_its_own_values_and_snapshot():
    dm = CUDADataManager(num_agents=2, episode_length=3, num_envs=3, device="cpu")
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    SPEC.allocate(dm, {"x": x, "k": 7}, batched=True)
    np.testing.assert_array_equal(dm.pull_data_from_device("x"), x)
    assert dm.scalar_value("k") == 7
    dm.data_on_device_via_torch("x").fill_(-1)
    dm.data_on_device_via_torch("_done_")[1] = 1
    CUDAEnvironmentReset(dm).reset_when_done(dm)
    np.testing.assert_array_equal(dm.pull_data_from_device("x")[1], x[1])
    assert (dm.pull_data_from_device("x")[[0, 2]] == -1).all()


def test_a_per_env_value_must_have_the_num_envs_axis():
    dm = CUDADataManager(num_agents=2, episode_length=3, num_envs=3, device="cpu")
    with pytest.raises(
        ValueError, match=r"'x': initial value of shape \(2,\) does not fit num_envs=3"
    ):
        SPEC.allocate(dm, {"x": np.zeros(2, np.float32)}, batched=True)
