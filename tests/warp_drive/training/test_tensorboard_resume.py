"""After a resume, TensorBoard holds each iteration once: the replayed iterations are not left
in the first event file (purge_step only hides them in the UI)."""

from __future__ import annotations

from collections import Counter

import pytest

from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

pytest.importorskip("tensorboard", reason="TensorBoard is part of the train extra")
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def train(run_dir, num_episodes, resume=None):
    config = toy_run_config(num_envs=2, train_batch_size=8, num_episodes=num_episodes)
    config["env"]["episode_length"] = 4
    config["saving"].update(model_params_save_freq=2, tensorboard=True)
    trainer = Trainer(ToyTargetEnv(num_envs=2, **config["env"]), config, AGENT_MAP,
                      results_directory=run_dir, verbose=False, resume_from=resume)  # fmt: skip
    try:
        trainer.train()
    finally:
        trainer.graceful_close()


def env_steps_logged(folder):
    """The steps of the ``env_steps`` scalar in every event file of ``folder``."""
    steps = Counter()
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for event in EventFileLoader(str(path)).Load():
            if any(v.tag == "env_steps" for v in event.summary.value):
                steps[event.step] += 1
    return steps


def test_replayed_iterations_are_in_one_event_file_only(tmp_path):
    run_dir = tmp_path / "run"
    train(run_dir, num_episodes=6)  # 3 iterations (8 steps of 2 envs, 4-step episodes)
    assert env_steps_logged(run_dir / "tensorboard") == {1: 1, 2: 1, 3: 1}
    train(run_dir, num_episodes=8, resume=ckpt.checkpoint_path(run_dir, 2))  # replays 3, then 4
    assert len(list((run_dir / "tensorboard").glob("events.out.tfevents.*"))) == 2
    assert env_steps_logged(run_dir / "tensorboard") == {1: 1, 2: 1, 3: 1, 4: 1}
    (aside,) = run_dir.glob("tensorboard.after_iter_2.*")
    assert env_steps_logged(aside) == {1: 1, 2: 1, 3: 1}  # the first branch, byte for byte
