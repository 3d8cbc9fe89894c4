"""``trainer.cuda_graphs``: ``auto`` by default, resolved per run (never on the CPU, on for
envs whose step a CUDA graph can record); the CPU run is unchanged."""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.training.rollout import resolve_cuda_graphs
from ai_economist.warp_drive.training.schema import ConfigError, validate_config
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer


class _Capturable:
    """Stands in for an env on a kernel backend (``GraphCapturableEnv``)."""

    def __init__(self, capturable: bool) -> None:
        self.capturable = capturable

    def step_capturable(self) -> bool:
        return self.capturable

    def graph_capture(self):  # pragma: no cover - not called here
        raise AssertionError

    def advance_host_steps(self, num_steps: int) -> None:  # pragma: no cover
        raise AssertionError


def test_cuda_graphs_accepts_auto_true_false_and_defaults_to_auto():
    assert validate_config(toy_run_config())["trainer"]["cuda_graphs"] == "auto"
    for given, expected in (("AUTO", "auto"), (True, True), (False, False)):
        config = validate_config(toy_run_config(cuda_graphs=given))
        assert config["trainer"]["cuda_graphs"] == expected
    with pytest.raises(ConfigError, match="'trainer.cuda_graphs' must be true, false or 'auto'"):
        validate_config(toy_run_config(cuda_graphs="yes"))


def test_auto_is_on_only_for_capturable_envs_on_cuda():
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")
    assert resolve_cuda_graphs("auto", cuda, _Capturable(True)) is True
    assert resolve_cuda_graphs("auto", cuda, _Capturable(False)) is False
    assert resolve_cuda_graphs("auto", cuda, object()) is False  # not a GraphCapturableEnv
    assert resolve_cuda_graphs(True, cuda, object()) is True  # the policy-part graphs, asked for
    for setting in ("auto", True, False):
        assert resolve_cuda_graphs(setting, cpu, _Capturable(True)) is False


def test_a_cpu_trainer_keeps_the_eager_loop(tmp_path):
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=2)
    env = ToyTargetEnv(num_envs=4, **config["env"])
    trainer = Trainer(env, config, {"a": ["0", "1", "2"], "p": ["p"]}, True, "first",
                      results_directory=tmp_path, verbose=False)  # fmt: skip
    trainer.train_iteration()
    assert trainer.cuda_graphs is False and trainer.iteration_graph is None
    assert trainer.rollout.graph_mode == "off"
    trainer.graceful_close()
