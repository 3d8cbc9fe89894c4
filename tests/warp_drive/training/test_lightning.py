"""The Lightning module trains exactly as our trainer does and reports through Lightning."""

from __future__ import annotations

import copy
import csv
import json

import pytest
import torch

pl = pytest.importorskip("lightning.pytorch", reason="needs the 'lightning' extra")

from lightning.pytorch.callbacks import ModelCheckpoint  # noqa: E402
from lightning.pytorch.loggers import CSVLogger  # noqa: E402

from ai_economist.warp_drive.training.lightning import (  # noqa: E402
    CUDACallback,
    PerfStatsCallback,
    WarpDriveModule,
)
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config  # noqa: E402
from ai_economist.warp_drive.training.trainer import Trainer, TrainingDiverged  # noqa: E402

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}
COMPARED = ("iteration", "env_steps", "a/loss", "a/entropy", "a/approx_kl", "a/reward_per_step",
            "p/loss", "p/value_loss", "p/episode_reward", "env/accuracy_a")  # fmt: skip


def toy_env(config: dict, device: str = "cpu") -> ToyTargetEnv:
    return ToyTargetEnv(num_envs=config["trainer"]["num_envs"], device=device, **config["env"])


def lightning_trainer(tmp_path, callbacks=(), **kwargs) -> pl.Trainer:
    return pl.Trainer(
        callbacks=list(callbacks),
        logger=CSVLogger(tmp_path, name="lightning"),
        log_every_n_steps=1,
        enable_checkpointing=any(isinstance(c, ModelCheckpoint) for c in callbacks),
        enable_progress_bar=False,
        enable_model_summary=False,
        **kwargs,
    )


def test_lightning_training_matches_our_trainer(tmp_path):
    # ours: 2 iterations (num_episodes 16 x 10 steps / 80), a row per iteration
    ours_config = toy_run_config(num_episodes=16)
    ours = Trainer(toy_env(ours_config), ours_config, AGENT_MAP, True, "first",
                   results_directory=tmp_path / "ours", verbose=False)  # fmt: skip
    ours.train()
    ours.graceful_close()
    ours_rows = [json.loads(x) for x in (tmp_path / "ours/metrics.jsonl").read_text().splitlines()]

    # Lightning: a budget of 5 iterations, stopped by max_steps after 2 (PPO a: 4 epochs x 2
    # minibatches, A2C p: 1 x 2, so 10 optimizer steps per iteration)
    config = toy_run_config(num_episodes=40)
    module = WarpDriveModule(toy_env(config), config, AGENT_MAP)
    assert len(module.train_dataloader()) == 5
    before = copy.deepcopy(module.policy_models.state_dict())
    perf = PerfStatsCallback()
    trainer = lightning_trainer(tmp_path, max_steps=20, accelerator="cpu",
                                callbacks=[perf, CUDACallback()])  # fmt: skip
    trainer.fit(module)

    assert trainer.global_step == 20 and module.core.iteration == 2
    after = module.policy_models.state_dict()
    assert all(not torch.equal(before[k], after[k]) for k in before if k.startswith("a."))
    for tag, policy in ours.policies.items():  # same seed, same updates: the same parameters
        for name, value in policy.model.state_dict().items():
            assert torch.equal(value, after[f"{tag}.{name}"]), f"{tag}.{name}"

    with open(tmp_path / "lightning/version_0/metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == [0, 1]
    for ours_row, row in zip(ours_rows, rows, strict=True):
        for key in COMPARED:
            assert float(row[key]) == pytest.approx(ours_row[key], rel=1e-6, nan_ok=True), key
        assert float(row["perf/iteration_s"]) > 0 and float(row["perf/env_steps_per_s"]) > 0
    assert "cuda/max_memory_mib" not in rows[0]  # CUDACallback is silent on the CPU
    assert perf.summary["iterations"] == 2 and perf.summary["env_steps_per_s"] > 0


def test_lightning_checkpoint_restores_the_counters(tmp_path):
    config = toy_run_config(num_episodes=40, seed=3)
    module = WarpDriveModule(toy_env(config), config, AGENT_MAP)
    saver = ModelCheckpoint(tmp_path / "ckpt", every_n_train_steps=10, save_top_k=-1)
    trainer = lightning_trainer(tmp_path, max_steps=20, accelerator="cpu", callbacks=[saver])
    trainer.fit(module)
    path = tmp_path / "ckpt/epoch=0-step=10.ckpt"  # after the first of 5 iterations

    resumed = WarpDriveModule(toy_env(config), config, AGENT_MAP)
    trainer = lightning_trainer(tmp_path, max_epochs=1, accelerator="cpu")
    trainer.fit(resumed, ckpt_path=path)
    # the schedules' clock continued, and the budget of 5 iterations of 80 env-steps holds
    assert resumed.core.iteration == 5 and resumed.core.env_steps == 400

    with pytest.raises(KeyError, match="not written by WarpDriveModule"):
        resumed.on_load_checkpoint({"state_dict": {}})


def test_lightning_checkpoints_carry_the_value_normalizers(tmp_path):
    config = toy_run_config(num_episodes=40)
    for tag in AGENT_MAP:
        config["policy"][tag]["normalize_value"] = True
    module = WarpDriveModule(toy_env(config), config, AGENT_MAP)
    lightning_trainer(tmp_path, max_steps=10, accelerator="cpu").fit(module)  # one iteration
    checkpoint = {}
    module.on_save_checkpoint(checkpoint)
    trained = {t: p.value_norm.moments.clone() for t, p in module.core.policies.items()}
    assert all(m[2] > 0 for m in trained.values())  # the statistics saw one batch

    fresh = WarpDriveModule(toy_env(config), config, AGENT_MAP)
    fresh.on_load_checkpoint(checkpoint)
    for tag, p in fresh.core.policies.items():
        assert torch.equal(p.value_norm.moments, trained[tag])
    plain = toy_run_config(num_episodes=40)
    with pytest.raises(KeyError, match="policy.a.normalize_value"):
        WarpDriveModule(toy_env(plain), plain, AGENT_MAP).on_load_checkpoint(checkpoint)


def test_a_nan_loss_stops_lightning_with_the_policy_named(tmp_path, monkeypatch):
    config = toy_run_config(num_episodes=40)
    env = toy_env(config)
    module = WarpDriveModule(env, config, AGENT_MAP)
    nan = {tag: torch.full_like(r, float("nan")) for tag, r in env._rewards.items()}
    monkeypatch.setattr(env, "rewards", lambda tag: nan[tag])
    with pytest.raises(TrainingDiverged, match="policy 'a'.*iteration 1"):
        lightning_trainer(tmp_path, max_steps=10, accelerator="cpu").fit(module)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_lightning_on_the_gpu_reports_memory(tmp_path):
    config = toy_run_config(num_episodes=40)
    module = WarpDriveModule(toy_env(config, "cuda:0"), config, AGENT_MAP)
    trainer = lightning_trainer(tmp_path, max_epochs=1, accelerator="gpu", devices=[0],
                                callbacks=[CUDACallback(), PerfStatsCallback()])  # fmt: skip
    trainer.fit(module)
    assert module.core.iteration == 5
    with open(tmp_path / "lightning/version_0/metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    peaks = [float(r["cuda/max_memory_mib"]) for r in rows if r.get("cuda/max_memory_mib")]
    assert len(peaks) == 1 and peaks[0] > 0
    with pytest.raises(RuntimeError, match="accelerator='cpu'"):
        lightning_trainer(tmp_path, max_steps=1, accelerator="cpu").fit(
            WarpDriveModule(toy_env(config, "cuda:0"), config, AGENT_MAP)
        )


def test_a_signal_under_lightning_finishes_the_iteration_saves_and_resumes(tmp_path, capsys):
    import signal

    from ai_economist.warp_drive.training.lightning import SignalCheckpoint

    class SendSigterm(pl.Callback):
        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            if batch_idx == 1:
                signal.raise_signal(signal.SIGTERM)  # during the second iteration

    config = toy_run_config(num_episodes=40)  # 5 iterations
    module = WarpDriveModule(toy_env(config), config, AGENT_MAP)
    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or what an earlier test left (Ray)
    saver = SignalCheckpoint(tmp_path / "ckpt")
    trainer = lightning_trainer(tmp_path, max_epochs=1, accelerator="cpu",
                                callbacks=[SendSigterm(), saver])  # fmt: skip
    trainer.fit(module)
    assert module.core.iteration == 2  # the interrupted iteration finished, then it stopped
    assert saver.signum == signal.SIGTERM
    assert saver.checkpoint == tmp_path / "ckpt" / "interrupted-step=20.ckpt"
    assert saver.checkpoint.is_file()
    assert f"SIGTERM: checkpoint written to {saver.checkpoint}" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before
    resumed = WarpDriveModule(toy_env(config), config, AGENT_MAP)
    lightning_trainer(tmp_path, max_epochs=1, accelerator="cpu").fit(
        resumed, ckpt_path=saver.checkpoint
    )
    assert resumed.core.iteration == 5 and resumed.core.env_steps == 400
