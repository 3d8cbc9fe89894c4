"""The update half of :class:`~ai_economist.warp_drive.training.trainer.Trainer`: GAE and the
PPO/A2C update of every trained policy, eagerly or inside the iteration graph's capture
(:mod:`.iteration_graph`, where the hyper-parameters and minibatch orders are device tensors).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ai_economist.warp_drive.training.algorithms import Batch, UpdateHyperParams, update_policy
from ai_economist.warp_drive.training.gae import compute_gae
from ai_economist.warp_drive.training.iteration_graph import StaticUpdateInputs
from ai_economist.warp_drive.training.recurrent import sequence_fields, sequence_length


class TrainerUpdate:
    """Mixin: ``_update``, ``update_all`` and ``evaluate_schedules`` over the Trainer's
    attributes (policies, rollout, dones, generator, distributed context, config)."""

    def _update(
        self,
        optimizers: dict[str, torch.optim.Optimizer] | None = None,
        backward: Callable[[torch.Tensor], None] | None = None,
    ) -> None:
        """GAE, then the PPO/A2C update of every trained policy (on a GPU, each policy's on
        a stream of its own unless another framework steps the optimizers)."""
        self.update_all(optimizers, backward)

    def update_all(
        self,
        optimizers: dict[str, torch.optim.Optimizer] | None = None,
        backward: Callable[[torch.Tensor], None] | None = None,
        static: dict[str, StaticUpdateInputs] | None = None,
    ) -> None:
        """:meth:`_update`; with ``static`` (the iteration graph's capture) every trained
        policy reads its hyper-parameters and minibatch orders from those tensors."""
        side_by_side = optimizers is None and backward is None
        for i, p in enumerate(self.policies.values()):
            p.window_reward += p.buffer.rewards.mean()
            if not p.config["to_train"]:
                continue
            inputs = None if static is None else static[p.tag]
            if side_by_side:
                with self.update_streams.on(p.tag):
                    self._update_policy(i, p, p.optimizer, backward, inputs)
            else:
                optimizer = p.optimizer if optimizers is None else optimizers[p.tag]
                self._update_policy(i, p, optimizer, backward, inputs)
        self.update_streams.join()

    def evaluate_schedules(self, p: Any) -> None:
        """``p.hyper``: the scheduled hyper-parameters at the current env-step count."""
        p.hyper = {k: s(self.env_steps) for k, s in p.schedules.items()}

    def _update_policy(
        self,
        index: int,
        p: Any,
        optimizer: torch.optim.Optimizer,
        backward: Callable[[torch.Tensor], None] | None,
        static: StaticUpdateInputs | None = None,
    ) -> None:
        buf = p.buffer
        if static is None:
            self.evaluate_schedules(p)
            gamma, decay_rate = p.hyper["gamma"], None
            for group in optimizer.param_groups:
                group["lr"] = p.hyper["lr"]
        else:  # inside the iteration graph's capture: values read from device tensors
            gamma, decay_rate = static.gamma, static.decay_rate
        values, last_values = buf.values, self.rollout.last_values[p.tag]
        if p.value_norm is not None:  # the model's values are normalised (PopArt)
            values, last_values = (
                p.value_norm.denormalize(values),
                p.value_norm.denormalize(last_values),
            )
        advantages, returns = compute_gae(
            buf.rewards, values, self.dones, last_values, gamma, p.config["gae_lambda"],
            decay_rate=decay_rate,
        )  # fmt: skip
        if p.value_norm is not None:
            p.value_norm.update(returns, self.dist.mean if self.dist.enabled else None)
            returns = p.value_norm.normalize(returns)
        if buf.states is not None:  # a recurrent policy: sequences from stored states
            seq_len = sequence_length(p.config, self.num_steps)
            batch = Batch(**sequence_fields(buf, self.dones, advantages, returns, seq_len))
        else:
            batch = Batch(
                obs=buf.obs.flatten(0, 2),
                masks=buf.masks.flatten(0, 2),
                actions=buf.actions.flatten(),
                log_probs=buf.log_probs.flatten(),
                advantages=advantages.flatten(),
                returns=returns.flatten(),
            )
        hp = UpdateHyperParams(
            algorithm=p.config["algorithm"],
            vf_loss_coeff=p.hyper["vf_loss_coeff"],
            entropy_coeff=p.hyper["entropy_coeff"],
            clip_param=p.config["clip_param"],
            clip_grad_norm=p.config["clip_grad_norm"],
            max_grad_norm=p.config["max_grad_norm"],
            normalize_advantage=p.config["normalize_advantage"],
            num_epochs=p.config["num_epochs"],
            num_mini_batches=p.config["num_mini_batches"],
            precision=self.config["trainer"]["precision"],
        )
        sync = self.dist.average_gradients if self.dist.enabled else None
        stats, nonfinite = update_policy(
            p.model, optimizer, batch, hp, self.generator, sync, backward,
            compile_loss=self.config["trainer"]["compile_update"],
            coeffs=None if static is None else static.coeffs,
            orders=None if static is None else static.orders,
        )  # fmt: skip
        p.window_stats += stats
        first_bad = torch.where(nonfinite, self._iteration_number, math.inf)
        self._nan_iteration[index] = torch.minimum(self._nan_iteration[index], first_bad)
