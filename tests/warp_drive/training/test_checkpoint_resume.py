"""Checkpoints: resuming reproduces the uninterrupted run exactly; a NaN stops the run and
keeps the last good checkpoint."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer, TrainingDiverged

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def run(config, run_dir, resume=None, env_cls=ToyTargetEnv):
    env = env_cls(num_envs=config["trainer"]["num_envs"], **config["env"])
    trainer = Trainer(
        env, config, AGENT_MAP, results_directory=run_dir, verbose=False, resume_from=resume
    )
    try:
        trainer.train()
    finally:
        trainer.graceful_close()
    return trainer


def rows(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def small_config(iterations):
    # episodes of 7 steps span iterations of 5 steps; 2 minibatches x 2 epochs use the sampler RNG
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=iterations * 20 // 7)
    config["env"]["episode_length"] = 7
    config["saving"]["model_params_save_freq"] = 2
    config["policy"]["a"]["num_epochs"] = 2
    config["policy"]["p"]["entropy_coeff"] = [[0, 0.1], [80, 0.0]]
    return config


def test_resume_continues_the_same_curve_exactly(tmp_path):
    straight = run(small_config(4), tmp_path / "straight")
    assert straight.iteration == 4 == straight.num_iterations
    # the same run, stopped after 2 iterations and resumed from its run directory
    first_half = small_config(4)
    first_half["trainer"]["num_episodes"] = 40 // 7  # 2 iterations
    run(first_half, tmp_path / "split")
    resumed = run(small_config(4), None, resume=tmp_path / "split")
    assert resumed.run_dir == (tmp_path / "split").resolve() and resumed.iteration == 4
    for tag in AGENT_MAP:
        a = straight.policies[tag].model.state_dict()
        b = resumed.policies[tag].model.state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a), tag
        sa = straight.policies[tag].optimizer.state_dict()["state"]
        sb = resumed.policies[tag].optimizer.state_dict()["state"]
        assert all(torch.equal(sa[i]["exp_avg"], sb[i]["exp_avg"]) for i in sa)
    keep = ("iteration", "env_steps", "episodes", "a/loss", "a/entropy", "p/loss", "a/episode_reward",
            "p/entropy_coeff", "env/accuracy_a")  # fmt: skip
    assert [{k: r.get(k) for k in keep} for r in rows(tmp_path / "split")] == [
        {k: r.get(k) for k in keep} for r in rows(tmp_path / "straight")
    ]


def test_checkpoint_contents_and_atomic_write(tmp_path):
    run(small_config(2), tmp_path)
    files = sorted((tmp_path / "checkpoints").iterdir())
    # no temporary files left behind; the SHA-256 sidecar is in `sha256sum -c` format
    assert [f.name for f in files] == ["ckpt_00000002.pt", "ckpt_00000002.pt.sha256"]
    digest = hashlib.sha256(files[0].read_bytes()).hexdigest()
    assert files[1].read_text() == f"{digest}  ckpt_00000002.pt\n"

    state = ckpt.load_checkpoint(ckpt.find_checkpoint(tmp_path))
    assert state["iteration"] == 2 and state["env_steps"] == 40
    assert state["config"]["trainer"]["num_envs"] == 4
    assert set(state["policies"]) == {"a", "p"}
    assert {"model", "optimizer"} <= set(state["policies"]["a"])
    local = state["ranks"][0]
    assert {"sampler", "tracker", "rng", "env"} <= set(local)
    assert {"torch", "numpy", "python"} <= set(local["rng"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        ckpt.find_checkpoint(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ckpt.find_checkpoint(tmp_path / "missing")


class NaNAfterEnv(ToyTargetEnv):
    """The planner's rewards turn NaN from env step 25 (inside iteration 5 of 5 steps)."""

    def step_all_envs(self) -> None:
        super().step_all_envs()
        self._steps = getattr(self, "_steps", 0) + 1
        if self._steps >= 25:
            self._rewards["p"].fill_(float("nan"))


def test_nan_loss_stops_the_run_and_keeps_the_last_good_checkpoint(tmp_path):
    config = small_config(8)
    config["trainer"]["nan_check_freq"] = 1
    with pytest.raises(TrainingDiverged, match=r"policy 'p'.* iteration 5.*ckpt_00000004\.pt"):
        run(config, tmp_path, env_cls=NaNAfterEnv)
    good = ckpt.find_checkpoint(tmp_path)
    assert good.name == "ckpt_00000004.pt"
    state = ckpt.load_checkpoint(good)
    for policy in state["policies"].values():
        assert all(torch.isfinite(v).all() for v in policy["model"].values())
    assert max(r["iteration"] for r in rows(tmp_path)) == 4
