"""``trainer.update_graphs`` on the CPU: the key, and that the CPU update stays eager and trains
exactly as without the key.  The graphs themselves: ``test_update_graph_gpu.py``."""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.training.algorithms import UpdateHyperParams
from ai_economist.warp_drive.training.schema import ConfigError, validate_config
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer
from ai_economist.warp_drive.training.update_graph import UpdateGraphs

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def test_the_key_is_a_bool_and_off_by_default():
    assert validate_config(toy_run_config())["trainer"]["update_graphs"] is False
    assert validate_config(toy_run_config(update_graphs=True))["trainer"]["update_graphs"] is True
    with pytest.raises(ConfigError, match="trainer.update_graphs"):
        validate_config(toy_run_config(update_graphs="yes"))


def trained_weights(tmp_path, iterations=2, **trainer_keys):
    config = toy_run_config(**trainer_keys)
    for pcfg in config["policy"].values():  # the published update: 1 minibatch, 1 epoch
        pcfg["num_epochs"] = pcfg["num_mini_batches"] = 1
    env = ToyTargetEnv(num_envs=8, **config["env"])
    trainer = Trainer(env, config, AGENT_MAP, True, "first", results_directory=tmp_path,
                      verbose=False)  # fmt: skip
    for _ in range(iterations):
        trainer.train_iteration()
    weights = {
        f"{tag}/{k}": v.detach().clone()
        for tag, p in trainer.policies.items()
        for k, v in p.model.state_dict().items()
    }
    stats = {tag: p.window_stats.clone() for tag, p in trainer.policies.items()}
    trainer.graceful_close()
    return trainer, weights, stats


def test_on_the_cpu_the_update_is_eager_and_trains_as_without_the_key(tmp_path, recwarn):
    plain, weights, stats = trained_weights(tmp_path / "plain")
    keyed, weights_k, stats_k = trained_weights(tmp_path / "keyed", update_graphs=True)
    assert not keyed.update_graph.enabled and keyed.update_graph.graphs == {}
    for p in keyed.policies.values():
        assert all(not g["capturable"] and isinstance(g["lr"], float)
                   for g in p.optimizer.param_groups)  # fmt: skip
    assert not [w for w in recwarn if "update_graphs" in str(w.message)]  # silently eager
    assert weights.keys() == weights_k.keys()
    for key, value in weights.items():
        assert torch.equal(value, weights_k[key]), key
    for tag, value in stats.items():
        assert torch.equal(value, stats_k[tag]), tag


def hyper(num_mini_batches=1, num_epochs=1):
    return UpdateHyperParams("PPO", 0.5, 0.01, 0.2, True, 10.0, True, num_epochs,
                             num_mini_batches)  # fmt: skip


def test_what_keeps_a_cuda_update_eager():
    # no CUDA call is made: these are the decisions before any capture
    with pytest.warns(RuntimeWarning, match="trainer.update_graphs: every policy updates eagerly"):
        distributed = UpdateGraphs(True, torch.device("cuda"), distributed=True)
    assert not distributed.enabled
    graphs = UpdateGraphs(True, torch.device("cuda"), distributed=False)
    assert graphs.enabled
    assert graphs._eager_reason(hyper(), None, None, True) is None
    assert "Lightning" in graphs._eager_reason(hyper(), None, lambda loss: None, True)
    assert "Lightning" in graphs._eager_reason(hyper(), None, None, False)
    assert "shuffle" in graphs._eager_reason(hyper(num_mini_batches=2), None, None, True)
    assert "shuffle" in graphs._eager_reason(hyper(num_epochs=4), None, None, True)
    assert not UpdateGraphs(True, torch.device("cpu"), distributed=False).enabled
