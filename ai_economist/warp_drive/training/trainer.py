"""A multi-agent PPO/A2C trainer that keeps the whole loop on the environment's device.

Usage (the WarpDrive way)::

    trainer = Trainer(env_wrapper, config, policy_tag_to_agent_id_map,
                      create_separate_placeholders_for_each_policy=True,
                      obs_dim_corresponding_to_num_agents="last")
    trainer.train()
    trainer.graceful_close()

``env_wrapper`` is any :class:`~ai_economist.warp_drive.env_protocol.BatchedPolicyEnv`.  One
iteration collects ``train_batch_size`` env-steps (``train_batch_size // num_envs`` steps of
every env), computes GAE advantages and runs the PPO or A2C update of every trained policy.
Observations, sampled actions, rewards and the update never leave the device; metrics are
copied to the host only when they are logged.
"""

from __future__ import annotations

import datetime
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from ai_economist.warp_drive.env_protocol import BatchedPolicyEnv, PolicySpec
from ai_economist.warp_drive.obs_layout import env_layout
from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.adam import Adam
from ai_economist.warp_drive.training.algorithms import (
    STAT_NAMES,
)
from ai_economist.warp_drive.training.distributed import (
    DistributedContext,
    processes_on_this_host,
)
from ai_economist.warp_drive.training.durable import write_atomic
from ai_economist.warp_drive.training.interrupts import TrainingInterrupted
from ai_economist.warp_drive.training.iteration_graph import (
    IterationGraph,
    wanted,
)
from ai_economist.warp_drive.training.metrics_logger import MetricsLogger, Progress
from ai_economist.warp_drive.training.models import build_policy_model
from ai_economist.warp_drive.training.recurrent import state_size, update_rows_of
from ai_economist.warp_drive.training.rollout import (
    EpisodeTracker,
    PhaseTimer,
    PolicyStreams,
    RolloutBuffer,
    RolloutCollector,
    resolve_cuda_graphs,
)
from ai_economist.warp_drive.training.run_dir import RunLock, check_fresh_run_dir, create_run_dir
from ai_economist.warp_drive.training.schedules import Schedule
from ai_economist.warp_drive.training.schema import validate_config
from ai_economist.warp_drive.training.trainer_checkpoint import TrainerCheckpointing
from ai_economist.warp_drive.training.trainer_loop import TrainerLoop
from ai_economist.warp_drive.training.trainer_metrics import TrainerMetrics, TrainingDiverged
from ai_economist.warp_drive.training.trainer_update import TrainerUpdate
from ai_economist.warp_drive.training.value_norm import ValueNormalizer

__all__ = ["Policy", "Trainer", "TrainingDiverged", "TrainingInterrupted"]

SCHEDULED = ("lr", "gamma", "vf_loss_coeff", "entropy_coeff")


@dataclass
class Policy:
    """Everything the trainer keeps for one policy tag."""

    tag: str
    spec: PolicySpec
    config: dict
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    schedules: dict[str, Schedule]
    buffer: RolloutBuffer
    act_model: Any = None  # the model used to act (compiled when trainer.compile is on)
    window_stats: torch.Tensor | None = None  # sum of STAT_NAMES over the logging window
    window_reward: torch.Tensor | None = None  # sum of the mean per-step reward
    hyper: dict[str, float] = field(default_factory=dict)
    value_norm: ValueNormalizer | None = None  # PopArt statistics (policy.<tag>.normalize_value)


def cpu_threads(num_threads: int, processes: int) -> int:
    """``trainer.num_threads`` resolved: as given, or (0) the machine's cores divided among
    ``processes`` training processes, at least one each."""
    if num_threads > 0:
        return num_threads
    return max(1, (os.cpu_count() or 1) // max(processes, 1))


class Trainer(TrainerLoop, TrainerCheckpointing, TrainerMetrics, TrainerUpdate):
    """Train the policies of a :class:`BatchedPolicyEnv` with PPO or A2C.

    Args:
        env_wrapper: the batched environment (its ``device`` is where training happens).
        config: a run configuration (see :mod:`.schema`); validated and completed here.
        policy_tag_to_agent_id_map: agent ids per policy tag, e.g.
            ``{"a": [0, ..., 50], "p": ["p"]}``; lengths must match the env's policy specs.
        create_separate_placeholders_for_each_policy: a no-op, accepted because WarpDrive's
            documented call passes it; the protocol always hands out one tensor per policy.
        obs_dim_corresponding_to_num_agents: a no-op (``"first"`` or ``"last"``, checked),
            accepted because WarpDrive's documented call passes it; the protocol's
            observations are always (envs, agents, obs_dim).
        num_devices: processes training together (``torch.distributed`` already initialised),
            on one host or several (``torchrun``).
        device_id: this process's global rank.
        results_directory: the run directory; default ``basedir/name/tag/<run_name|timestamp>``.
        verbose: print the metrics table and a progress bar (rank 0 only).
        resume_from: a checkpoint file or a run directory to continue from.
        write_files: create the run directory, ``config.yaml`` and the metrics files; off
            when another framework (the Lightning module) logs and checkpoints.
    """

    def __init__(
        self,
        env_wrapper: BatchedPolicyEnv,
        config: dict,
        policy_tag_to_agent_id_map: dict[str, list],
        create_separate_placeholders_for_each_policy: bool = False,
        obs_dim_corresponding_to_num_agents: str = "first",
        num_devices: int = 1,
        device_id: int = 0,
        results_directory: str | Path | None = None,
        verbose: bool = True,
        resume_from: str | Path | None = None,
        config_source: str = "<dict>",
        write_files: bool = True,
    ) -> None:
        if obs_dim_corresponding_to_num_agents not in ("first", "last"):
            raise ValueError("obs_dim_corresponding_to_num_agents must be 'first' or 'last'")
        self.config = validate_config(config, config_source)
        self.env = env_wrapper
        self.device = torch.device(env_wrapper.device)
        self.dist = DistributedContext(device_id, num_devices)
        self.verbose = verbose and self.dist.is_main
        tcfg = self.config["trainer"]
        self._check_env(policy_tag_to_agent_id_map)
        self.num_envs = tcfg["num_envs"]
        self.num_steps = tcfg["train_batch_size"] // self.num_envs
        self.steps_per_iteration = tcfg["train_batch_size"] * self.dist.world_size
        self.num_iterations = math.ceil(
            tcfg["num_episodes"] * env_wrapper.episode_length / tcfg["train_batch_size"]
        )
        self.iteration = 0
        self.env_steps = 0

        if self.device.type == "cpu":
            torch.set_num_threads(
                cpu_threads(tcfg["num_threads"], processes_on_this_host(self.dist.world_size))
            )
        if self.device.type == "cuda" and tcfg["tf32"]:
            torch.backends.cuda.matmul.allow_tf32 = True  # tensor cores for float32 matmuls
            torch.backends.cudnn.allow_tf32 = True
        seed = tcfg["seed"]
        torch.manual_seed(seed)
        np.random.seed(seed + self.dist.rank)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed + 1 + 1000 * self.dist.rank)
        self.policies = {tag: self._build_policy(tag) for tag in self.config["policy"]}
        self.cuda_graphs = resolve_cuda_graphs(tcfg["cuda_graphs"], self.device, env_wrapper)
        self.rollout = RolloutCollector(
            env_wrapper, self.policies, self.num_steps, self.generator, self.cuda_graphs,
            precision=tcfg["acting_precision"] or tcfg["precision"],
            fused_sampling=tcfg["fused_sampling"],
            fused_sampling_kernel=tcfg["fused_sampling_kernel"],
        )  # fmt: skip
        self.dones = self.rollout.dones
        self.iteration_graph = IterationGraph(self) if wanted(self) else None
        if self.iteration_graph is not None:
            self.rollout.use_graphs = False  # eager warm-up, then the iteration graph
        trained = [t for t, p in self.policies.items() if p.config["to_train"]]
        # the trained policies' updates side by side (not across processes: NCCL's streams)
        self.update_streams = PolicyStreams(self.device, trained, enabled=not self.dist.enabled)
        self.tracker = EpisodeTracker(list(self.policies), self.num_envs, self.device)
        self.timer = PhaseTimer(self.device, synchronize=tcfg["profile_phases"])
        # first iteration whose loss was NaN/inf, per policy (inf: none), checked lazily
        self._nan_iteration = torch.full((len(self.policies),), math.inf, device=self.device)
        self._iteration_number = torch.zeros((), device=self.device)  # iteration + 1, on device
        self._window_iterations = 0
        self._window_start = time.perf_counter()
        self.last_checkpoint: Path | None = None
        self._last_save = time.perf_counter()
        self.last_metrics: dict[str, Any] = {}

        env_wrapper.reset_all_envs()
        resume_path = ckpt.find_checkpoint(resume_from) if resume_from else None
        if resume_path is not None:
            self._restore(ckpt.load_checkpoint(resume_path), resume_path)
            self.last_checkpoint = resume_path
        run_dir = self._make_run_dir(results_directory, resume_path) if write_files else None
        self.run_dir = self.dist.broadcast_object(run_dir)  # rank 0's folder (its timestamp)
        self._lock = RunLock(self.run_dir) if self.dist.is_main and write_files else None
        if self._lock is not None:
            self._lock.acquire()
        self.logger = None
        if self.dist.is_main and write_files:
            text = yaml.safe_dump(self.config, sort_keys=False)
            write_atomic(self.run_dir / "config.yaml", text.encode("utf-8"), "run config")
            resumed_at = self.iteration if resume_path is not None else None
            if resumed_at is not None:
                self._tidy_for_resume(resumed_at)
            self.logger = MetricsLogger(
                self.run_dir, self.config["saving"]["tensorboard"], resumed_at
            )
            for path in self.logger.set_aside:
                print(f"resuming from iteration {resumed_at}: metric rows moved to {path}")
        self._progress: Progress | None = None

    # ---------------------------------------------------------------------------- set-up --
    def _check_env(self, agent_map: dict[str, list]) -> None:
        specs = self.env.policy_specs
        tags = set(self.config["policy"])
        if tags != set(specs) or tags != set(agent_map):
            raise ValueError(
                f"policy tags differ: config 'policy' has {sorted(tags)}, the env has "
                f"{sorted(specs)}, policy_tag_to_agent_id_map has {sorted(agent_map)}"
            )
        for tag, ids in agent_map.items():
            if len(ids) != specs[tag].num_agents:
                raise ValueError(
                    f"policy '{tag}': {len(ids)} agent ids given, the env has "
                    f"{specs[tag].num_agents} agents with this policy"
                )
        if self.env.num_envs != self.config["trainer"]["num_envs"]:
            raise ValueError(
                f"the env wrapper steps {self.env.num_envs} envs but trainer.num_envs is "
                f"{self.config['trainer']['num_envs']}"
            )

    def _build_policy(self, tag: str) -> Policy:
        pcfg = self.config["policy"][tag]
        spec = self.env.policy_specs[tag]
        model = build_policy_model(
            tag, pcfg, spec, self.device, env_layout(self.env, tag, spec.obs_dim)
        )
        if hasattr(model, "fused_layers"):
            model.fused_layers = self.config["trainer"]["fused_layers"]
        if hasattr(model, "bf16_heads"):
            model.bf16_heads = self.config["trainer"]["bf16_heads"]
        self.dist.broadcast_parameters(model)
        sequences = update_rows_of(model, pcfg, spec, self.num_steps, self.num_envs)
        if pcfg["num_mini_batches"] > sequences:
            raise ValueError(
                f"'policy.{tag}.num_mini_batches' ({pcfg['num_mini_batches']}) must be <= the "
                f"{sequences} sequences its recurrent update has per iteration (rollout steps "
                f"/ model.seq_len x num_envs x {spec.num_agents} agents)"
            )
        schedules = {k: Schedule(pcfg[k], f"policy.{tag}.{k}") for k in SCHEDULED}
        fused = self.device.type == "cuda"  # one kernel for all parameters (same algorithm)
        optimizer = Adam(  # torch's Adam without its torch._dynamo import (adam.py)
            model.parameters(), lr=schedules["lr"](0), eps=1e-5, fused=fused
        )
        act_model = torch.compile(model) if self.config["trainer"]["compile"] else model
        value_norm = None
        if pcfg["normalize_value"]:
            value_norm = ValueNormalizer(getattr(model, "value_head", None))
        return Policy(
            tag=tag,
            spec=spec,
            config=pcfg,
            model=model,
            optimizer=optimizer,
            schedules=schedules,
            buffer=RolloutBuffer.allocate(
                spec, self.num_steps, self.num_envs, self.device, state_size(model)
            ),
            act_model=act_model,
            window_stats=torch.zeros(len(STAT_NAMES), device=self.device),
            window_reward=torch.zeros((), device=self.device),
            value_norm=value_norm,
        )

    def _tidy_for_resume(self, iteration: int) -> None:
        """Remove leftovers of a killed save; move checkpoints after ``iteration`` aside."""
        removed = ckpt.clean_temporary_files(self.run_dir / ckpt.CHECKPOINT_DIR)
        if removed:
            print(f"removed {len(removed)} temporary file(s) of an interrupted checkpoint save")
        moved = ckpt.set_aside_newer(self.run_dir, iteration)
        if moved:
            print(f"resuming from iteration {iteration}: later checkpoints moved to {moved}")

    def _make_run_dir(self, results_directory: str | Path | None, resume_path: Path | None) -> Path:
        """The run folder: given, the resumed run's, or ``basedir/name/tag/<run_name>``; a new
        timestamped folder is created exclusively (``-2``, ``-3``, ... when the second is taken)."""
        if results_directory is not None:
            run_dir = Path(results_directory)
        elif resume_path is not None:
            run_dir = ckpt.run_dir_of(resume_path)
        else:
            saving = self.config["saving"]
            parent = Path(saving["basedir"]) / saving["name"] / saving["tag"]
            if not saving["run_name"]:
                stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
                return create_run_dir(parent, stamp) if self.dist.is_main else parent / stamp
            run_dir = parent / saving["run_name"]
            if self.dist.is_main:  # the others follow rank 0's folder
                check_fresh_run_dir(run_dir, "saving.run_name")
        if self.dist.is_main:
            run_dir.mkdir(parents=True, exist_ok=True)
        return run_dir

    # ------------------------------------------------------------------------- training --
    def train_iteration(
        self,
        optimizers: dict[str, torch.optim.Optimizer] | None = None,
        backward: Callable[[torch.Tensor], None] | None = None,
    ) -> None:
        """One rollout of ``train_batch_size`` env-steps and one update (no logging, no sync).

        Args:
            optimizers: per trained policy tag, the optimizer to step instead of the policy's
                own (the Lightning module passes Lightning's wrappers of the same optimizers).
            backward: computes a loss's gradients (default ``loss.backward()``).
        """
        graph = self.iteration_graph
        if graph is not None and (optimizers is not None or backward is not None):
            graph.disable()  # another framework steps the optimizers: eager updates
            graph = self.iteration_graph = None
        self._iteration_number.fill_(self.iteration + 1)
        if graph is None or not graph.run():
            with self.timer.phase("rollout"):
                self._collect_rollout()
            with self.timer.phase("update"):
                self._update(optimizers, backward)
        self.iteration += 1
        self.env_steps += self.steps_per_iteration
        self._window_iterations += 1

    def _collect_rollout(self) -> None:
        self.rollout.collect(self.timer)
        self.record_episodes()

    def record_episodes(self) -> None:
        """Add the rollout's rewards to the episode returns (device work only)."""
        self.tracker.record({t: p.buffer.rewards for t, p in self.policies.items()}, self.dones)

    def graceful_close(self) -> None:
        """Flush and close the logs (safe to call more than once)."""
        if self._progress is not None:
            self._progress.close()
        if self.logger is not None:
            self.logger.close()
            self.logger = None
        if self._lock is not None:
            self._lock.release()
