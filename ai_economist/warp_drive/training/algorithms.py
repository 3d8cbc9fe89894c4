"""The PPO and A2C updates, written out like a CleanRL script.

``update_policy`` takes one policy's rollout (already flattened to a batch of agent-steps,
with advantages and returns from GAE) and runs ``num_epochs`` passes of ``num_mini_batches``
minibatches.  It returns its statistics as one device tensor (no host synchronisation).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import torch
from torch import nn

from ai_economist.warp_drive.training.models import autocast, masked_log_prob_entropy

STAT_NAMES = (
    "loss",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "clip_frac",
    "grad_norm",
)
"""Order of the entries of the statistics tensor returned by :func:`update_policy`."""


@dataclass
class UpdateHyperParams:
    """The hyper-parameters of one update (schedules already evaluated)."""

    algorithm: str  # "PPO" or "A2C"
    vf_loss_coeff: float
    entropy_coeff: float
    clip_param: float
    clip_grad_norm: bool
    max_grad_norm: float
    normalize_advantage: bool
    num_epochs: int
    num_mini_batches: int
    precision: str = "fp32"  # the models' hidden layers: "fp32", or "bf16" autocast on a GPU

    def loss_settings(self) -> LossSettings:
        """The settings that stay fixed during training."""
        return LossSettings(
            self.algorithm, self.clip_param, self.normalize_advantage, self.precision
        )


@dataclass
class Batch:
    """Training samples of one policy: B = T * E * N agent-steps, or for a recurrent model
    B sequences of L steps (every per-step field then has an L axis after B, see
    :func:`.recurrent.sequence_fields`)."""

    obs: torch.Tensor  # (B, obs_dim)
    masks: torch.Tensor  # (B, num_actions)
    actions: torch.Tensor  # (B,)
    log_probs: torch.Tensor  # (B,) at sampling time
    advantages: torch.Tensor  # (B,)
    returns: torch.Tensor  # (B,)
    states: torch.Tensor | None = None  # (B, state_size) recurrent: each sequence's first state
    resets: torch.Tensor | None = None  # (B, L) recurrent: an episode begins at this step

    def rows(self, idx: slice | torch.Tensor) -> Batch:
        """The minibatch of rows ``idx``."""
        return Batch(
            *(None if (v := getattr(self, f.name)) is None else v[idx] for f in fields(Batch))
        )


def update_policy(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    hp: UpdateHyperParams,
    generator: torch.Generator | None = None,
    sync_gradients: Callable[[nn.Module], None] | None = None,
    backward: Callable[[torch.Tensor], None] | None = None,
    compile_loss: bool = False,
    coeffs: torch.Tensor | None = None,
    orders: Sequence[torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the PPO or A2C update of one policy.

    Args:
        sync_gradients: called after every backward pass (averages the gradients over
            processes when training on several GPUs).
        backward: computes the gradients of a loss (default ``loss.backward()``); the
            Lightning module passes its ``manual_backward`` so Lightning's hooks run.
        compile_loss: compute each minibatch's loss with :func:`compiled_minibatch_loss`.
        coeffs: ``(vf_loss_coeff, entropy_coeff)`` as a device tensor of two, read instead
            of ``hp``'s numbers (a CUDA graph of the update reads them at every replay).
        orders: one permutation of the batch per epoch, drawn beforehand (a CUDA graph
            cannot draw them); default: drawn here from ``generator`` when there is more
            than one minibatch or epoch.

    Returns:
        ``(stats, nonfinite)``: the mean of :data:`STAT_NAMES` over the minibatches, and a
        bool scalar that is True if any loss was NaN or infinite.
    """
    size = batch.obs.shape[0]
    mb_size = -(-size // hp.num_mini_batches)
    device = batch.obs.device
    params = [p for p in model.parameters() if p.requires_grad]
    max_norm = hp.max_grad_norm if hp.clip_grad_norm else float("inf")
    stats = torch.zeros(len(STAT_NAMES), device=device)
    nonfinite = torch.zeros((), dtype=torch.bool, device=device)
    loss_fn = compiled_minibatch_loss() if compile_loss else minibatch_loss
    if coeffs is None:
        coeffs = loss_coefficients(hp, device, as_tensor=compile_loss)
    settings = hp.loss_settings()
    num_updates = 0
    for epoch in range(hp.num_epochs):
        order = None
        if orders is not None:
            order = orders[epoch]
        elif hp.num_mini_batches > 1 or hp.num_epochs > 1:
            order = torch.randperm(size, generator=generator, device=device)
        for start in range(0, size, mb_size):
            idx = slice(start, start + mb_size) if order is None else order[start : start + mb_size]
            minibatch = batch.rows(idx)
            loss, step_stats = loss_fn(model, minibatch, coeffs, settings)

            optimizer.zero_grad(set_to_none=True)
            if backward is None:
                loss.backward()
            else:
                backward(loss)
            if sync_gradients is not None:
                sync_gradients(model)
            grad_norm = nn.utils.clip_grad_norm_(params, max_norm)
            optimizer.step()

            with torch.no_grad():
                stats += torch.cat([step_stats, grad_norm.reshape(1)])
                nonfinite |= ~torch.isfinite(loss)
            num_updates += 1
    return stats / num_updates, nonfinite


def loss_coefficients(
    hp: UpdateHyperParams, device: torch.device, as_tensor: bool
) -> tuple[float, float] | torch.Tensor:
    """``(vf_loss_coeff, entropy_coeff)``: numbers, or (``as_tensor``, for the compiled loss,
    so that a schedule's new values do not re-trace it) a device tensor of two."""
    if not as_tensor:
        return hp.vf_loss_coeff, hp.entropy_coeff
    coeffs = torch.empty(2, device=device)
    coeffs[0].fill_(hp.vf_loss_coeff)
    coeffs[1].fill_(hp.entropy_coeff)
    return coeffs


@dataclass(frozen=True)
class LossSettings:
    """The settings of the loss that stay fixed during training (constants of a compiled loss)."""

    algorithm: str
    clip_param: float
    normalize_advantage: bool
    precision: str


def minibatch_loss(
    model: nn.Module,
    mb: Batch,
    coeffs: tuple[float, float] | torch.Tensor,
    settings: LossSettings,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The PPO or A2C loss of one minibatch.

    Args:
        coeffs: ``(vf_loss_coeff, entropy_coeff)``, numbers or a tensor of two (the compiled
            loss takes a tensor, so that a schedule's new values do not re-trace it).

    Returns:
        ``(loss, stats)``: the scalar loss and the detached
        ``[loss, policy_loss, value_loss, entropy, approx_kl, clip_frac]``.
    """
    with autocast(mb.obs.device, settings.precision):
        if mb.states is None:
            logits, values = model(mb.obs)
        else:  # a recurrent model re-runs its sequences (truncated BPTT)
            logits, values = model.forward_sequence(mb.obs, mb.states, mb.resets)
    log_prob, entropy = masked_log_prob_entropy(logits, mb.masks, mb.actions)

    advantages = mb.advantages
    if settings.normalize_advantage and advantages.numel() > 1:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

    log_ratio = log_prob - mb.log_probs
    ratio = log_ratio.exp()
    clip = settings.clip_param
    if settings.algorithm == "PPO":
        clipped = ratio.clamp(1.0 - clip, 1.0 + clip)
        policy_loss = -torch.min(ratio * advantages, clipped * advantages).mean()
    else:  # A2C: the plain policy gradient
        policy_loss = -(log_prob * advantages).mean()
    value_loss = 0.5 * (values - mb.returns).pow(2).mean()
    entropy_mean = entropy.mean()
    loss = policy_loss + coeffs[0] * value_loss - coeffs[1] * entropy_mean

    with torch.no_grad():
        approx_kl = ((ratio - 1.0) - log_ratio).mean()
        clip_frac = ((ratio - 1.0).abs() > clip).float().mean()
        stats = torch.stack([loss, policy_loss, value_loss, entropy_mean, approx_kl, clip_frac])
    return loss, stats.detach()


@functools.cache
def compiled_minibatch_loss() -> Callable:
    """:func:`minibatch_loss` compiled by ``torch.compile`` (Inductor fuses its elementwise
    work and reductions into a few kernels, forward and backward); built on first use."""
    return torch.compile(minibatch_loss, dynamic=False)
