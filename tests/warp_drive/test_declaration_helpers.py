"""The declaration helpers shared by GPU environments: policy arrays and block sizes."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.warp_drive.scenario import block_threads
from ai_economist.warp_drive.state import policy_io_fields


def test_policy_io_fields_go_kind_by_kind_in_the_kernels_order():
    fields = policy_io_fields(("a", "n", "obs_a", "act_a"), ("p", 1, "obs_p", 3))
    assert [f.name for f in fields] == [
        "observations_a", "observations_p", "action_mask_a", "action_mask_p",
        "sampled_actions_a", "sampled_actions_p", "rewards_a", "rewards_p",
    ]  # fmt: skip
    shapes = {f.name: f.shape for f in fields}
    assert shapes["observations_a"] == ("n", "obs_a") and shapes["action_mask_p"] == (1, 3)
    assert shapes["sampled_actions_p"] == (1,) and shapes["rewards_a"] == ("n",)
    dtypes = {f.name: np.dtype(f.dtype) for f in fields}
    assert dtypes["sampled_actions_a"] == np.int32 and dtypes["rewards_p"] == np.float32
    resets = {f.name: f.reset for f in fields}
    assert resets["observations_a"] == resets["action_mask_p"] == "none"
    assert resets["sampled_actions_a"] == resets["rewards_p"] == "zeros"
    snapshot = policy_io_fields(("a", 2, 4, 5), reset="snapshot")
    assert [f.reset for f in snapshot] == ["snapshot", "snapshot", "zeros", "zeros"]


def test_block_threads_rounds_to_warps_and_names_the_env():
    assert block_threads("env", 5) == 32 and block_threads("env", 33) == 64
    assert block_threads("env", 5, 8) == 8
    with pytest.raises(ValueError, match=r"my_env: threads_per_env=4: needs 5\.\.1024"):
        block_threads("my_env", 5, 4)
    with pytest.raises(ValueError, match="needs 1100..1024"):
        block_threads("my_env", 1100)
