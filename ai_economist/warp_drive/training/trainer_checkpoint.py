"""The checkpoint half of :class:`~ai_economist.warp_drive.training.trainer.Trainer`.

A checkpoint holds the models, the optimizers, the counters, the resolved config and, per
process, the random streams, the episode-return tracker, the metrics window and the envs' own
state, so that a resumed run continues the same curve exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training import checkpoint_state as cstate
from ai_economist.warp_drive.training.iteration_graph import portable_state


class TrainerCheckpointing:
    """Mixin: ``save_checkpoint`` and ``_restore`` over the Trainer's attributes."""

    def _local_state(self) -> dict[str, Any]:
        """This process's share of a checkpoint (random streams, env and episode state)."""
        state: dict[str, Any] = {
            "sampler": self.generator.get_state(),
            "tracker": {k: v.cpu() for k, v in self.tracker.state_dict().items()},
            "window": {
                t: (p.window_stats.cpu(), p.window_reward.cpu()) for t, p in self.policies.items()
            },
            "window_iterations": self._window_iterations,
            "nan_iteration": self._nan_iteration.cpu(),
            "rng": cstate.global_rng_states(),
            "recurrent": self.rollout.recurrent.state_dict(),
        }
        env_state = cstate.capture_env_state(self.env)
        if env_state is not None:
            state["env"] = env_state
        return state

    def save_checkpoint(self) -> Path | None:
        """Write a full checkpoint of the current iteration (rank 0 writes; all ranks call)."""
        if self.run_dir is None:
            raise RuntimeError(
                "this Trainer was built with write_files=False and has no run directory to "
                "save checkpoints in (the Lightning module saves through Lightning)"
            )
        self._check_finite()
        local = self._local_state()
        shards = self.dist.gather(local)
        path = None
        if self.dist.is_main:
            state = {
                "format_version": ckpt.FORMAT_VERSION,
                "iteration": self.iteration,
                "env_steps": self.env_steps,
                "world_size": self.dist.world_size,
                "config": self.config,
                "policies": {t: self._policy_state(p) for t, p in self.policies.items()},
                "ranks": shards,
            }
            path = ckpt.save_checkpoint(ckpt.checkpoint_path(self.run_dir, self.iteration), state)
            ckpt.prune_checkpoints(self.run_dir, self.config["saving"]["keep_checkpoints"])
            self.last_checkpoint = path
        self.dist.barrier()
        return path

    @staticmethod
    def _policy_state(p: Any) -> dict[str, Any]:
        state = {"model": p.model.state_dict(), "optimizer": portable_state(p.optimizer)}
        layout = getattr(p.model, "layout", None)
        if layout is not None:  # a conv_lstm's observation segments (to rebuild it alone)
            state["observation_layout"] = [s.to_plain() for s in layout]
        if p.value_norm is not None:
            state["value_normalizer"] = p.value_norm.state_dict()
        return state

    def _restore(self, state: dict[str, Any], source: Path | str = "<checkpoint>") -> None:
        """Continue from a checkpoint (models, optimizers, counters, RNG, env).

        Raises:
            CheckpointError: the checkpoint does not fit the run (another environment,
                ``trainer.num_envs``, policy tags or model sizes), naming every difference.
        """
        models = {tag: p.model for tag, p in self.policies.items()}
        cstate.check_checkpoint_fits(state, self.config, source, models)
        if self.iteration_graph is not None:
            self.iteration_graph.recapture()  # the optimizers' state tensors are replaced
        for tag, p in self.policies.items():
            saved = state["policies"][tag]
            p.model.load_state_dict(saved["model"])
            p.optimizer.load_state_dict(saved["optimizer"])
            if p.value_norm is not None:
                p.value_norm.load_state_dict(saved["value_normalizer"])
        self.iteration = state["iteration"]
        self.env_steps = state["env_steps"]
        ranks = state["ranks"]
        if self.dist.rank >= len(ranks):
            return  # more processes than when saved: this rank starts fresh streams
        local = ranks[self.dist.rank]
        self.generator.set_state(local["sampler"])
        self.tracker.load_state_dict({k: v.to(self.device) for k, v in local["tracker"].items()})
        for tag, (stats, reward) in local["window"].items():
            self.policies[tag].window_stats.copy_(stats)
            self.policies[tag].window_reward.copy_(reward)
        self._window_iterations = local["window_iterations"]
        self._nan_iteration.copy_(local["nan_iteration"])
        cstate.restore_global_rng_states(local["rng"])
        if not cstate.restore_env_state(self.env, local.get("env")):
            # the env restarts its episodes: drop the returns of the interrupted ones
            for carry in self.tracker.carry.values():
                carry.zero_()
            self.rollout.recurrent.zero_()  # and the memory of the interrupted episodes
        elif self.rollout.recurrent.states:
            self.rollout.recurrent.load_state_dict(
                {k: v.to(self.device) for k, v in local.get("recurrent", {}).items()}
            )
