"""Checkpoint resume of a COVID-19 training run (numpy backend): the envs continue their
episodes, so the resumed run equals the uninterrupted one bit for bit.  Checkpoints without
env state (older ones) still load and fall back to restarting the envs, with a warning."""

from __future__ import annotations

import json
import warnings

import pytest
import torch

from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config
from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment
from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.trainer import Trainer

AGENT_MAP = {"a": [str(i) for i in range(51)], "p": ["p"]}
EPISODE_LENGTH = 6


def run_config(iterations: int) -> dict:
    """2 envs x 5 steps per iteration, episodes of 6 days (they span iterations), tiny models."""
    policy = {
        "algorithm": "PPO",
        "gamma": 0.98,
        "lr": 0.001,
        "entropy_coeff": 0.05,
        "num_epochs": 2,
        "num_mini_batches": 2,
        "model": {"fc_dims": [8, 8]},
    }
    return {
        "name": "covid_and_economy_environment",
        "env": env_config(TRAINING_ENV_CONFIG, episode_length=EPISODE_LENGTH),
        "trainer": {
            "num_envs": 2,
            "train_batch_size": 10,
            "num_episodes": iterations * 10 // EPISODE_LENGTH,
            "progress_bar": False,
        },
        "policy": {"a": dict(policy), "p": {**policy, "entropy_coeff": [[0, 0.5], [40, 0.05]]}},
        "saving": {"metrics_log_freq": 1, "model_params_save_freq": 2, "tensorboard": False},
    }


def run(config: dict, run_dir, resume=None, backend: str = "numpy") -> Trainer:
    env = CovidAndEconomyEnvironment(**config["env"])
    wrapper = FoundationEnvWrapper(env, num_envs=config["trainer"]["num_envs"], env_backend=backend)
    trainer = Trainer(wrapper, config, AGENT_MAP, True, "last", results_directory=run_dir,
                      verbose=False, resume_from=resume)  # fmt: skip
    try:
        trainer.train()
    finally:
        trainer.graceful_close()
    return trainer


def rows(run_dir) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    drop = ("env_steps_per_s", "time/")
    return [{k: v for k, v in json.loads(line).items() if not k.startswith(drop)} for line in lines]


def same_parameters(a: Trainer, b: Trainer) -> bool:
    for tag in AGENT_MAP:
        pa, pb = a.policies[tag].model.state_dict(), b.policies[tag].model.state_dict()
        if not all(torch.equal(pa[k], pb[k]) for k in pa):
            return False
    return True


def test_covid_resume_reproduces_the_next_iterations_exactly(tmp_path):
    straight = run(run_config(4), tmp_path / "straight")
    assert straight.num_iterations == straight.iteration == 4
    run(run_config(2), tmp_path / "split")  # stopped mid-episode after 2 iterations
    state = ckpt.load_checkpoint(ckpt.find_checkpoint(tmp_path / "split"))
    env_state = state["ranks"][0]["env"]
    assert env_state["backend"] == "numpy"
    # 5 steps per iteration: the envs are on day 10 % 6 of their second episode
    assert env_state["backend_state"]["simulation"]["timestep"].tolist() == [10 % 6] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an exact resume warns about nothing
        resumed = run(run_config(4), None, resume=tmp_path / "split")
    assert resumed.iteration == 4
    assert same_parameters(straight, resumed)
    for tag in AGENT_MAP:
        sa = straight.policies[tag].optimizer.state_dict()["state"]
        sb = resumed.policies[tag].optimizer.state_dict()["state"]
        assert all(torch.equal(sa[i]["exp_avg_sq"], sb[i]["exp_avg_sq"]) for i in sa)
    expected, got = rows(tmp_path / "straight"), rows(tmp_path / "split")
    assert [r["iteration"] for r in got] == [1, 2, 3, 4]
    assert got == expected  # losses, rewards, episode counts and env/usa metrics
    assert any(k.startswith("env/usa/") for k in got[-1])


def test_checkpoint_without_env_state_still_resumes_with_a_warning(tmp_path):
    run(run_config(2), tmp_path / "old")
    path = ckpt.find_checkpoint(tmp_path / "old")
    state = ckpt.load_checkpoint(path)
    del state["ranks"][0]["env"]  # as written before env states were saved
    ckpt.save_checkpoint(path, state)
    with pytest.warns(UserWarning, match="no env state.*restart from a reset"):
        resumed = run(run_config(3), None, resume=tmp_path / "old")
    assert resumed.iteration == 3


def test_cpu_backend_checkpoints_warn_that_the_envs_will_restart(tmp_path):
    config = run_config(1)
    config["trainer"]["num_envs"], config["trainer"]["train_batch_size"] = 1, 5
    with pytest.warns(UserWarning, match="env_backend='cpu'.*restarts the envs"):
        run(config, tmp_path, backend="cpu")
    assert "env" not in ckpt.load_checkpoint(ckpt.find_checkpoint(tmp_path))["ranks"][0]


def test_numba_backend_resume_under_the_cuda_simulator(tmp_path):
    numba = pytest.importorskip("numba")
    if not numba.config.ENABLE_CUDASIM:
        pytest.skip("needs NUMBA_ENABLE_CUDASIM=1 (set by `make test`) or a GPU")

    def config(iterations: int) -> dict:  # 2 envs x 3 steps per iteration, episodes of 4 days
        c = run_config(iterations)
        c["env"]["episode_length"] = 4
        c["trainer"].update(train_batch_size=6, num_episodes=iterations * 6 // 4)
        c["saving"]["model_params_save_freq"] = 1
        return c

    straight = run(config(2), tmp_path / "straight", backend="numba")
    run(config(1), tmp_path / "split", backend="numba")
    resumed = run(config(2), None, resume=tmp_path / "split", backend="numba")
    assert straight.iteration == resumed.iteration == 2
    assert same_parameters(straight, resumed)
    assert rows(tmp_path / "split") == rows(tmp_path / "straight")
