"""The trainer's gather-trade-build batch served from the array economy equals the batch of
dict envs: specs, agent ids, observations, masks, rewards, dones and episode metrics."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from ai_economist.foundation.scenarios.simple_wood_and_stone import registration  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (  # noqa: E402
    ArrayGatherTradeBuildBatch,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (  # noqa: E402
    GatherTradeBuildBatch,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (  # noqa: E402
    PHASE1_ENV_CONFIG,
    PHASE2_ENV_CONFIG,
    env_config,
)
from ai_economist.warp_drive import registry  # noqa: E402


def _config(phase):
    config = env_config(phase)
    config.update(episode_length=40, dense_log_frequency=None, starting_agent_coin=20.0)
    config["components"][3]["PeriodicBracketTax"]["period"] = 10
    return config


def _assert_same(ref, arr, with_rewards=True):
    for tag in ("a", "p"):
        np.testing.assert_array_equal(arr.observations(tag).numpy(), ref.observations(tag).numpy())
        np.testing.assert_array_equal(arr.action_masks(tag).numpy(), ref.action_masks(tag).numpy())
        if with_rewards:
            np.testing.assert_array_equal(arr.rewards(tag).numpy(), ref.rewards(tag).numpy())
    np.testing.assert_array_equal(arr.done().numpy(), ref.done().numpy())


@pytest.mark.parametrize("phase", [PHASE1_ENV_CONFIG, PHASE2_ENV_CONFIG], ids=["phase1", "phase2"])
def test_array_backend_equals_dict_backend(phase):
    ref = GatherTradeBuildBatch(_config(phase), num_envs=3, seed=4)
    arr = ArrayGatherTradeBuildBatch(_config(phase), num_envs=3, seed=4)
    assert arr.policy_specs == ref.policy_specs
    assert arr.policy_tag_to_agent_id_map == ref.policy_tag_to_agent_id_map
    _assert_same(ref, arr, with_rewards=False)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(90):
        for tag in ("a", "p"):
            masks = ref.action_masks(tag).numpy()
            choice = (rng.random(masks.shape) * masks).argmax(axis=-1)
            ref.actions(tag)[:] = ref.actions(tag).new_tensor(choice)
            arr.actions(tag)[:] = arr.actions(tag).new_tensor(choice)
        ref.step_all_envs()
        arr.step_all_envs()
        _assert_same(ref, arr)
        if ref.done().numpy().any():
            ends += 1
            assert arr.episode_metrics() == ref.episode_metrics()
            ref.reset_only_done_envs()
            arr.reset_only_done_envs()
            _assert_same(ref, arr, with_rewards=False)
    assert ends == 2


def test_backend_selection():
    from ai_economist.warp_drive.backend_names import EnvBackend

    entry = registry.ENVIRONMENTS["gather_trade_build_phase2"]
    run = {"env": _config(PHASE2_ENV_CONFIG), "trainer": {"num_envs": 2, "seed": 0}}
    assert registration.backends(run) == (EnvBackend.PYCUDA, EnvBackend.NUMBA, EnvBackend.NUMPY,
                                          EnvBackend.CPU)  # the GPU economy covers it too  # fmt: skip
    assert isinstance(entry.make(run, "cpu"), ArrayGatherTradeBuildBatch)  # auto: the arrays
    assert isinstance(registration.build(run, "cpu"), ArrayGatherTradeBuildBatch)  # the same rule
    assert isinstance(registration.build(run, "cpu", EnvBackend.NUMPY), ArrayGatherTradeBuildBatch)
    assert isinstance(registration.build(run, "cpu", EnvBackend.CPU), GatherTradeBuildBatch)
    run["env"]["planner_reward_type"] = "inv_income_weighted_utility"
    assert registration.backends(run) == (EnvBackend.CPU,)  # not covered by the arrays
    assert isinstance(entry.make(run, "cpu"), GatherTradeBuildBatch)
    with pytest.raises(ValueError, match="env_backend='numpy'.*inv_income_weighted_utility"):
        registration.build(run, "cpu", EnvBackend.NUMPY)
    with pytest.raises(ValueError, match="'numpy': the environment has no such backend"):
        entry.make(run, "cpu", "numpy")


@pytest.mark.gpu
def test_array_backend_tensors_on_the_gpu_equal_the_cpu_ones():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    cpu = ArrayGatherTradeBuildBatch(_config(PHASE2_ENV_CONFIG), num_envs=2, seed=0)
    gpu = ArrayGatherTradeBuildBatch(_config(PHASE2_ENV_CONFIG), num_envs=2, seed=0, device="cuda")
    assert gpu.observations("a").device.type == "cuda"
    rng = np.random.default_rng(1)
    for _ in range(12):
        for tag in ("a", "p"):
            masks = cpu.action_masks(tag).numpy()
            choice = (rng.random(masks.shape) * masks).argmax(axis=-1).astype(np.int32)
            choice = torch.from_numpy(choice)
            cpu.actions(tag)[:] = choice
            gpu.actions(tag)[:] = choice.cuda()
        cpu.step_all_envs()
        gpu.step_all_envs()
        for tag in ("a", "p"):
            assert torch.equal(gpu.observations(tag).cpu(), cpu.observations(tag))
            assert torch.equal(gpu.rewards(tag).cpu(), cpu.rewards(tag))


@pytest.mark.filterwarnings("ignore:.*GatherTradeBuildBatch has no state_dict")
def test_phase2_trains_through_the_array_backend(tmp_path):
    import json

    from ai_economist.training import training_script

    tiny = ["trainer.num_envs=2", "trainer.train_batch_size=20", "trainer.num_episodes=4",
            "env.episode_length=10", "saving.tensorboard=false", "trainer.progress_bar=false",
            "saving.metrics_log_freq=1", "policy.a.model.fc_dims=[8]",
            "policy.p.model.fc_dims=[8]", "env.dense_log_frequency=null",
            "trainer.env_backend=numpy"]  # fmt: skip
    args = ["--env", "gather_trade_build_phase2", "--device", "cpu", "--results_dir", str(tmp_path)]
    assert training_script.main([*args, "--quiet", *tiny]) == 0
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert np.isfinite(rows[-1]["env/social/productivity"]) and np.isfinite(rows[-1]["p/loss"])


def test_auto_on_a_gpu_device_takes_the_gpu_economy_else_the_arrays(monkeypatch):
    """On a GPU ``auto`` is ``pycuda`` (the GPU economy) when its kernels cover the config,
    else the fastest host path, the arrays."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone import array_batch
    from ai_economist.warp_drive import registrar
    from ai_economist.warp_drive.backend_names import EnvBackend

    built = []
    monkeypatch.setattr(
        array_batch, "ArrayGatherTradeBuildBatch", lambda *a, **kw: built.append(kw)
    )
    monkeypatch.setattr(
        registrar, "build_gpu_env", lambda cls, run, device, backend: built.append(backend)
    )
    run = {"env": _config(PHASE2_ENV_CONFIG), "trainer": {"num_envs": 30, "seed": 0}}
    registry.ENVIRONMENTS["gather_trade_build_phase2"].make(run, "cuda")  # the stubs build nothing
    run["env"]["components"][1]["ContinuousDoubleAuction"]["max_num_orders"] = 80  # GPU: <= 64
    registry.ENVIRONMENTS["gather_trade_build_phase2"].make(run, "cuda")
    assert built == [EnvBackend.PYCUDA, {"device": "cuda"}]
