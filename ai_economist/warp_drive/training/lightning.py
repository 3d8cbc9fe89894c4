"""Train with PyTorch Lightning: a ``LightningModule`` around our rollout and PPO/A2C update.

Lightning users get its loggers (CSV, TensorBoard, W&B, MLflow, ...), callbacks, progress bar
and checkpoints around the same training as :class:`~.trainer.Trainer`::

    import lightning.pytorch as pl
    from ai_economist.warp_drive.training.lightning import PerfStatsCallback, WarpDriveModule

    module = WarpDriveModule(env_wrapper, run_config, policy_tag_to_agent_id_map)
    pl.Trainer(max_epochs=1, accelerator="cpu", callbacks=[PerfStatsCallback()]).fit(module)

One Lightning batch is one iteration of our trainer: a rollout of ``train_batch_size``
env-steps, then the update of every trained policy (:meth:`.Trainer.train_iteration`, not a
copy of it).  Optimisation is manual: each policy keeps its own Adam optimizer and schedules;
Lightning's wrappers of those optimizers are stepped, so ``trainer.global_step`` (and so
``max_steps``) counts optimizer steps: ``num_epochs * num_mini_batches`` per trained policy
and iteration.  The data loader is a stub of ``num_iterations`` indices (the run config's
budget), so ``max_epochs=1`` trains the whole budget.  Needs the ``lightning`` extra.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset

try:
    import lightning.pytorch as pl
except ImportError:  # the older distribution name
    try:
        import pytorch_lightning as pl
    except ImportError as exc:
        raise ImportError(
            "ai_economist.warp_drive.training.lightning needs PyTorch Lightning: "
            "pip install 'ai-economist[lightning]' (or pip install 'lightning>=2.2')"
        ) from exc

from ai_economist.warp_drive.env_protocol import BatchedPolicyEnv
from ai_economist.warp_drive.training.interrupts import StopSignals, TrainingInterrupted
from ai_economist.warp_drive.training.trainer import Trainer

PROGRESS_BAR_METRICS = ("episode_reward", "entropy")
"""Per-policy metrics also shown in Lightning's progress bar."""


class IterationIndices(Dataset):
    """The data loader stub: item ``i`` is the index of a training iteration (no data; the
    rollout is collected inside ``training_step``)."""

    def __init__(self, num_iterations: int) -> None:
        self.num_iterations = num_iterations

    def __len__(self) -> int:
        return self.num_iterations

    def __getitem__(self, index: int) -> int:
        if not 0 <= index < self.num_iterations:
            raise IndexError(f"iteration {index} outside 0..{self.num_iterations - 1}")
        return index


class WarpDriveModule(pl.LightningModule):
    """Our multi-agent PPO/A2C training as a Lightning module.

    Args:
        env_wrapper: the batched environment; the Lightning trainer must run on its device
            (``accelerator="cpu"`` for a CPU env, ``accelerator="gpu", devices=[i]`` for
            ``cuda:i``), one process only.
        config: a run configuration (see :mod:`.schema`), as for :class:`.Trainer`.
        policy_tag_to_agent_id_map: agent ids per policy tag, as for :class:`.Trainer`.
        obs_dim_corresponding_to_num_agents: ``"first"`` or ``"last"``, as for ``Trainer``.

    Every iteration logs the row our trainer writes to ``metrics.csv`` (``a/loss``,
    ``p/episode_reward``, ``env_steps_per_s``, ``env/...``) with ``self.log``; Lightning's
    ``log_every_n_steps`` decides which rows reach the logger.
    """

    def __init__(
        self,
        env_wrapper: BatchedPolicyEnv,
        config: dict,
        policy_tag_to_agent_id_map: dict[str, list],
        obs_dim_corresponding_to_num_agents: str = "first",
    ) -> None:
        super().__init__()
        self.automatic_optimization = False
        self.core = Trainer(
            env_wrapper,
            config,
            policy_tag_to_agent_id_map,
            create_separate_placeholders_for_each_policy=True,
            obs_dim_corresponding_to_num_agents=obs_dim_corresponding_to_num_agents,
            verbose=False,
            write_files=False,
        )
        self.config = self.core.config
        # registered as submodules: Lightning's checkpoints hold the policy models
        self.policy_models = torch.nn.ModuleDict(
            {tag: p.model for tag, p in self.core.policies.items()}
        )
        self.trained_tags = [t for t, p in self.core.policies.items() if p.config["to_train"]]

    # --------------------------------------------------------------------- Lightning API --
    def configure_optimizers(self) -> list[torch.optim.Optimizer]:
        """The Adam optimizer of every trained policy (schedules set their learning rates)."""
        return [self.core.policies[tag].optimizer for tag in self.trained_tags]

    def train_dataloader(self) -> DataLoader:
        """The stub: one item per iteration of the run config's budget (a run resumed from a
        mid-epoch Lightning checkpoint runs the epoch's remaining batches: the same budget)."""
        return DataLoader(IterationIndices(self.core.num_iterations), batch_size=None)

    def on_fit_start(self) -> None:
        """Check that Lightning runs where the env's tensors live, in one process."""
        if self.trainer.world_size > 1:
            raise RuntimeError(
                f"WarpDriveModule trains in one process; this Lightning trainer has "
                f"world_size {self.trainer.world_size}. For several GPUs use "
                "'ai-economist-train --num_gpus N'"
            )
        env_device = torch.device(self.core.env.device)
        if not _same_device(self.device, env_device):
            raise RuntimeError(
                f"the environment lives on {env_device} but Lightning placed the module on "
                f"{self.device}; use pl.Trainer(accelerator='cpu') for a CPU env and "
                "accelerator='gpu', devices=[i] for an env on cuda:i"
            )

    def on_train_start(self) -> None:
        self.core.metrics_row()  # drop what happened before training (and start the clock)

    def training_step(self, batch: Any, batch_idx: int) -> None:
        """One rollout and one update of every trained policy; logs the iteration's metrics."""
        core = self.core
        core.train_iteration(self._lightning_optimizers(), self.manual_backward)
        core._check_finite()  # TrainingDiverged names the policy and the iteration
        row = core.metrics_row()
        metrics = {k: float(v) for k, v in row.items() if isinstance(v, int | float)}
        shown = {k: v for k, v in metrics.items() if k.endswith(PROGRESS_BAR_METRICS)}
        rest = {k: v for k, v in metrics.items() if k not in shown}
        self.log_dict(shown, prog_bar=True, on_step=True, on_epoch=False, batch_size=1)
        self.log_dict(rest, on_step=True, on_epoch=False, batch_size=1)

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Add the counters that drive the schedules and the sampler's random stream."""
        checkpoint["ai_economist"] = {
            "iteration": self.core.iteration,
            "env_steps": self.core.env_steps,
            "sampler": self.core.generator.get_state(),
            "value_normalizers": {
                t: p.value_norm.state_dict()
                for t, p in self.core.policies.items()
                if p.value_norm is not None
            },
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Restore what :meth:`on_save_checkpoint` added (models and optimizers: Lightning)."""
        saved = checkpoint.get("ai_economist")
        if saved is None:
            raise KeyError(
                "this Lightning checkpoint has no 'ai_economist' entry: it was not written "
                "by WarpDriveModule"
            )
        self.core.iteration = saved["iteration"]
        self.core.env_steps = saved["env_steps"]
        self.core.generator.set_state(saved["sampler"])
        saved_norms = saved.get("value_normalizers", {})
        for tag, p in self.core.policies.items():
            if (tag in saved_norms) != (p.value_norm is not None):
                raise KeyError(
                    f"'policy.{tag}.normalize_value': this Lightning checkpoint was trained with "
                    f"it {'on' if tag in saved_norms else 'off'}, the run config has it "
                    f"{'off' if tag in saved_norms else 'on'}"
                )
            if p.value_norm is not None:
                p.value_norm.load_state_dict(saved_norms[tag])

    # ---------------------------------------------------------------------------- helpers --
    def _lightning_optimizers(self) -> dict[str, Any]:
        """Lightning's wrappers of our optimizers, by policy tag (stepping them counts)."""
        if not self.trained_tags:
            return {}
        opts = self.optimizers()
        if not isinstance(opts, list | tuple):
            opts = [opts]
        return dict(zip(self.trained_tags, opts, strict=True))


def _same_device(a: torch.device, b: torch.device) -> bool:
    """``cuda`` and ``cuda:<current device>`` are the same device."""
    if a.type != b.type or a.type != "cuda":
        return a.type == b.type
    current = torch.cuda.current_device()
    return (a.index if a.index is not None else current) == (
        b.index if b.index is not None else current
    )


def _synchronize(module: pl.LightningModule) -> None:
    if module.device.type == "cuda":
        torch.cuda.synchronize(module.device)


class PerfStatsCallback(pl.Callback):
    """Wall-clock time and env-steps per second of every iteration, and of the whole run.

    On a GPU it waits for the device at the iteration's ends, so the times include the GPU's
    work.  Logs ``perf/iteration_s`` and ``perf/env_steps_per_s``; ``summary`` holds the
    run's totals after training (``iterations``, ``seconds``, ``env_steps_per_s``).
    """

    def __init__(self) -> None:
        self.summary: dict[str, float] = {}
        self._start = 0.0
        self._run_start = 0.0
        self._iterations = 0

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        _synchronize(pl_module)
        self._run_start = time.perf_counter()
        self._iterations = 0

    def on_train_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule,
                             batch: Any, batch_idx: int) -> None:  # fmt: skip
        _synchronize(pl_module)
        self._start = time.perf_counter()

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule,
                           outputs: Any, batch: Any, batch_idx: int) -> None:  # fmt: skip
        _synchronize(pl_module)
        seconds = time.perf_counter() - self._start
        self._iterations += 1
        steps = pl_module.core.steps_per_iteration
        pl_module.log("perf/iteration_s", seconds, on_step=True, batch_size=1)
        pl_module.log("perf/env_steps_per_s", steps / max(seconds, 1e-9), on_step=True,
                      batch_size=1)  # fmt: skip

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        _synchronize(pl_module)
        seconds = time.perf_counter() - self._run_start
        steps = self._iterations * pl_module.core.steps_per_iteration
        self.summary = {
            "iterations": float(self._iterations),
            "seconds": seconds,
            "env_steps_per_s": steps / max(seconds, 1e-9),
        }


class SignalCheckpoint(pl.Callback):
    """Interrupts keep work under Lightning too: on the first SIGINT or SIGTERM during ``fit``
    (one process, main thread) the batch, one iteration, finishes, a Lightning checkpoint
    ``<dirpath>/interrupted-step=<global step>.ckpt`` is written and training stops
    (``trainer.should_stop``). A second signal stops at once (:class:`TrainingInterrupted`).

    Afterwards ``signum`` and ``checkpoint`` say what happened; continue with
    ``pl.Trainer(...).fit(module, ckpt_path=callback.checkpoint)``.
    """

    def __init__(self, dirpath: str | Path) -> None:
        self.dirpath = Path(dirpath)
        self.signum: int | None = None
        self.checkpoint: Path | None = None
        self._stops: StopSignals | None = None

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._stops = StopSignals(self._stop_at_once, enabled=trainer.world_size == 1)
        self._stops.__enter__()

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule,
                           outputs: Any, batch: Any, batch_idx: int) -> None:  # fmt: skip
        if self._stops is None or self._stops.signum is None or self.checkpoint is not None:
            return
        self.signum = self._stops.signum
        self.checkpoint = self.dirpath / f"interrupted-step={trainer.global_step}.ckpt"
        trainer.save_checkpoint(self.checkpoint)
        trainer.should_stop = True
        print(f"{signal.Signals(self.signum).name}: checkpoint written to {self.checkpoint}; "
              f"continue with fit(module, ckpt_path={str(self.checkpoint)!r})",
              file=sys.stderr)  # fmt: skip

    def _stop_at_once(self, signum: int) -> None:
        raise TrainingInterrupted(signum, -1, self.checkpoint, True)

    def _restore_handlers(self) -> None:
        if self._stops is not None:
            self._stops.__exit__()
            self._stops = None

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._restore_handlers()

    def on_exception(self, trainer: pl.Trainer, pl_module: pl.LightningModule,
                     exception: BaseException) -> None:  # fmt: skip
        self._restore_handlers()


class CUDACallback(pl.Callback):
    """Per epoch on a GPU: its time (after waiting for the device) and peak memory.

    Logs ``cuda/epoch_s`` and ``cuda/max_memory_mib``; does nothing when the module is not on
    a CUDA device.
    """

    def __init__(self) -> None:
        self._start = 0.0

    def on_train_epoch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if pl_module.device.type != "cuda":
            return
        torch.cuda.reset_peak_memory_stats(pl_module.device)
        torch.cuda.synchronize(pl_module.device)
        self._start = time.perf_counter()

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if pl_module.device.type != "cuda":
            return
        torch.cuda.synchronize(pl_module.device)
        seconds = time.perf_counter() - self._start
        peak = torch.cuda.max_memory_allocated(pl_module.device) / 2**20
        pl_module.log("cuda/epoch_s", seconds, on_epoch=True, batch_size=1)
        pl_module.log("cuda/max_memory_mib", peak, on_epoch=True, batch_size=1)
