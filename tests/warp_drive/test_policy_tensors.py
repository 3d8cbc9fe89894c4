"""``PolicyTensors``: the protocol's tensors, allocated once from the policy specs."""

from __future__ import annotations

import pytest

from ai_economist.warp_drive.env_protocol import BatchedPolicyEnv, PolicySpec
from ai_economist.warp_drive.policy_tensors import PolicyTensors

torch = pytest.importorskip("torch")


class Env(PolicyTensors):
    def __init__(self) -> None:
        self.num_envs, self.episode_length = 2, 3
        specs = {"a": PolicySpec(3, 4, 5), "p": PolicySpec(1, 2, 7)}
        self._allocate_policy_tensors(specs, num_envs=2, device="cpu")

    def reset_all_envs(self) -> None: ...

    def reset_only_done_envs(self) -> None: ...

    def step_all_envs(self) -> None: ...

    def episode_metrics(self) -> dict[str, float]:
        return {}


def test_shapes_dtypes_and_initial_values_follow_the_specs():
    env = Env()
    assert isinstance(env, BatchedPolicyEnv) and env.device == torch.device("cpu")
    assert env.observations("a").shape == (2, 3, 4) and env.observations("p").dtype == torch.float32
    assert env.action_masks("p").shape == (2, 1, 7) and bool(env.action_masks("a").all())
    assert env.actions("a").dtype == torch.int32 and env.actions("a").shape == (2, 3)
    assert env.rewards("p").shape == (2, 1) and not bool(env.rewards("a").any())
    assert env.done().dtype == torch.int32 and env.done().shape == (2,)
    env.actions("a")[0, 1] = 4  # the trainer writes into the env's own tensor
    assert env._actions["a"][0, 1] == 4
    specs = env.policy_specs
    specs.clear()  # a copy: the env's specs stay
    assert set(env.policy_specs) == {"a", "p"}
