"""The multi-GPU code path (gradient averaging over processes), run with gloo on the CPU."""

from __future__ import annotations

import torch

from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.distributed import DistributedContext, launch
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer


def _worker(ctx: DistributedContext, run_dir: str) -> None:
    torch.set_num_threads(1)
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=6)  # 3 iterations
    config["saving"]["model_params_save_freq"] = 3
    env = ToyTargetEnv(num_envs=4, **{**config["env"], "seed": 100 + ctx.rank})
    trainer = Trainer(env, config, {"a": ["0", "1", "2"], "p": ["p"]}, True, "first",
                      num_devices=ctx.world_size, device_id=ctx.rank, results_directory=run_dir,
                      verbose=False)  # fmt: skip
    metrics = trainer.train()
    trainer.graceful_close()
    params = {t: p.model.state_dict() for t, p in trainer.policies.items()}
    torch.save({"params": params, "metrics": metrics}, f"{run_dir}/rank{ctx.rank}.pt")


def test_two_processes_stay_in_sync(tmp_path):
    launch(_worker, 2, (str(tmp_path),), backend="gloo", start_method="fork")
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=False)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=False)
    for tag in ("a", "p"):
        for key, value in r0["params"][tag].items():
            assert torch.equal(value, r1["params"][tag][key]), (tag, key)
    # metrics are reduced over both processes: 2 x 4 envs x 5 steps per iteration
    assert r0["metrics"]["env_steps"] == 3 * 2 * 20 == r1["metrics"]["env_steps"]
    assert r0["metrics"]["a/loss"] == r1["metrics"]["a/loss"]
    state = ckpt.load_checkpoint(ckpt.find_checkpoint(tmp_path))
    assert state["world_size"] == 2 and len(state["ranks"]) == 2
    assert not torch.equal(state["ranks"][0]["env"]["obs/a"], state["ranks"][1]["env"]["obs/a"])


class _FastClock:
    """``time`` for the trainer module of one rank: 1,000 s pass at every reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1000.0
        return self.now


def _timed_worker(ctx: DistributedContext, run_dir: str) -> None:
    from ai_economist.warp_drive.training import trainer_loop as trainer_module

    torch.set_num_threads(1)
    if ctx.rank == 1:  # only this rank sees the interval pass: both must still save together
        trainer_module.time = _FastClock()
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=6)  # 3 iterations
    config["trainer"]["nan_check_freq"] = 1
    config["saving"].update(model_params_save_freq=100, checkpoint_interval_s=100.0)
    env = ToyTargetEnv(num_envs=4, **{**config["env"], "seed": 100 + ctx.rank})
    trainer = Trainer(env, config, {"a": ["0", "1", "2"], "p": ["p"]}, True, "first",
                      num_devices=ctx.world_size, device_id=ctx.rank, results_directory=run_dir,
                      verbose=False)  # fmt: skip
    trainer.train()
    trainer.graceful_close()


def test_wall_clock_checkpoints_are_taken_by_all_ranks_together(tmp_path):
    launch(_timed_worker, 2, (str(tmp_path),), backend="gloo", start_method="fork")
    saved = [ckpt.load_checkpoint(p) for p in ckpt.list_checkpoints(tmp_path)]
    assert [s["iteration"] for s in saved] == [1, 2, 3]
    assert all(len(s["ranks"]) == 2 for s in saved)


def _signal_worker(ctx: DistributedContext, run_dir: str) -> None:
    import signal

    from ai_economist.warp_drive.training.trainer import TrainingInterrupted

    torch.set_num_threads(1)
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=12)  # 6 iterations
    config["trainer"]["nan_check_freq"] = 2
    config["saving"]["model_params_save_freq"] = 100
    env = ToyTargetEnv(num_envs=4, **{**config["env"], "seed": 100 + ctx.rank})
    trainer = Trainer(env, config, {"a": ["0", "1", "2"], "p": ["p"]}, True, "first",
                      num_devices=ctx.world_size, device_id=ctx.rank, results_directory=run_dir,
                      verbose=False)  # fmt: skip
    one = trainer.train_iteration

    def iteration():
        one()
        if ctx.rank == 1 and trainer.iteration == 1:  # only this rank gets the signal
            signal.raise_signal(signal.SIGTERM)

    trainer.train_iteration = iteration
    try:
        trainer.train()
        stopped = None
    except TrainingInterrupted as exc:
        stopped = (exc.signum, exc.iteration)
    trainer.graceful_close()
    torch.save({"stopped": stopped}, f"{run_dir}/rank{ctx.rank}.pt")


def test_a_signal_to_one_rank_stops_all_ranks_at_the_same_iteration(tmp_path):
    import signal

    launch(_signal_worker, 2, (str(tmp_path),), backend="gloo", start_method="fork")
    for rank in (0, 1):  # both stopped at iteration 2, the first where the ranks compare notes
        stopped = torch.load(tmp_path / f"rank{rank}.pt", weights_only=False)["stopped"]
        assert stopped == (signal.SIGTERM, 2), rank
    (saved,) = ckpt.list_checkpoints(tmp_path)
    state = ckpt.load_checkpoint(saved)
    assert state["iteration"] == 2 and len(state["ranks"]) == 2


LAUNCHER_SCRIPT = """
import os, signal, sys
import torch
from ai_economist.warp_drive.training.distributed import launch
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer, TrainingInterrupted

def worker(ctx, run_dir):
    torch.set_num_threads(1)
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=12)  # 6 iterations
    config["trainer"]["nan_check_freq"] = 2
    config["saving"]["model_params_save_freq"] = 100
    env = ToyTargetEnv(num_envs=4, **{**config["env"], "seed": 100 + ctx.rank})
    trainer = Trainer(env, config, {"a": ["0", "1", "2"], "p": ["p"]}, True, "first",
                      num_devices=ctx.world_size, device_id=ctx.rank, results_directory=run_dir,
                      verbose=False)
    one = trainer.train_iteration

    def iteration():
        one()
        if ctx.rank == 0 and trainer.iteration == 1:  # SIGTERM to the launcher alone
            os.kill(os.getppid(), signal.SIGTERM)

    trainer.train_iteration = iteration
    try:
        trainer.train()
        stopped = None
    except TrainingInterrupted as exc:
        stopped = (exc.signum, exc.iteration)
    trainer.graceful_close()
    torch.save({"stopped": stopped}, f"{run_dir}/rank{ctx.rank}.pt")

launch(worker, 2, (sys.argv[1],), backend="gloo", start_method="fork")
print("launcher returned")
"""


def test_sigterm_to_the_launcher_alone_reaches_every_worker(tmp_path):
    import signal
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER_SCRIPT, str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and "launcher returned" in done.stdout, done.stderr[-3000:]
    for rank in (0, 1):  # the launcher passed it on; both stopped where the ranks compare notes
        stopped = torch.load(tmp_path / f"rank{rank}.pt", weights_only=False)["stopped"]
        assert stopped == (signal.SIGTERM, 2), rank
    (saved,) = ckpt.list_checkpoints(tmp_path)
    assert ckpt.load_checkpoint(saved)["iteration"] == 2
