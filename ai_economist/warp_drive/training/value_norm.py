"""PopArt value normalisation (van Hasselt et al., 2016): the value head learns targets scaled
to zero mean and unit variance, with the scale tracked over the run.

Why: the published models share one trunk between the policy and the value head, and the
value loss is ``0.5 * (V - R)^2`` in reward units.  With long horizons the returns are large
(the COVID-19 states' discounted returns average about 160 at gamma 0.998), so at the start of
training the value loss's gradient is about 10^7 times the policy loss's in the trunk, the
gradient norm is clipped by a factor of about 40, and the value head needs about 1,000 Adam
steps just to reach the returns' level (``docs/results/cpu-value-scale-2026-11-30.md``).
Normalised targets keep the value loss near 1 whatever the rewards' scale.

How: per policy, exponential moving averages of the targets' first and second moments (with
the start-up bias removed) give ``mean`` and ``std``.  The model's value output ``v`` stands
for ``v * std + mean`` in reward units: the trainer stores raw outputs in the rollout buffer,
converts them for GAE (:meth:`ValueNormalizer.denormalize`), then calls :meth:`update` with the
new returns, which moves the statistics and rescales the value head's weight and bias so that
its outputs in reward units do not change ("preserving outputs precisely"), and fits the
value head to :meth:`normalize` (returns).  Everything stays on the device: no host syncs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

DECAY = 0.99
"""Weight of the old statistics at each update (one update per iteration)."""

MIN_VARIANCE = 1e-4
"""Floor of the tracked variance (targets that hardly vary are not blown up)."""


class ValueNormalizer:
    """Running statistics of one policy's value targets, and the PopArt head rescaling.

    Args:
        value_head: the model's final value layer (``nn.Linear`` with one output), whose
            weight and bias are rescaled when the statistics move.
        decay: weight of the old statistics at each update.
    """

    def __init__(self, value_head: nn.Module, decay: float = DECAY) -> None:
        if not isinstance(value_head, nn.Linear) or value_head.out_features != 1:
            raise ValueError(
                "normalize_value needs the model's value head to be an nn.Linear with one "
                f"output (attribute 'value_head'); got {type(value_head).__name__}"
            )
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"decay must be in [0, 1), got {decay}")
        self.head = value_head
        self.decay = decay
        device = value_head.weight.device
        # moving averages of E[x], E[x^2], and the total weight given to data so far
        self.moments = torch.zeros(3, dtype=torch.float64, device=device)

    @property
    def mean(self) -> torch.Tensor:
        """Mean of the targets (0 before the first update), float32 scalar tensor."""
        return self._stats()[0]

    @property
    def std(self) -> torch.Tensor:
        """Standard deviation of the targets (1 before the first update), float32 scalar."""
        return self._stats()[1]

    def _stats(self) -> tuple[torch.Tensor, torch.Tensor]:
        first, second, weight = self.moments
        seen = weight > 0
        safe = torch.where(seen, weight, torch.ones_like(weight))
        mean = torch.where(seen, first / safe, torch.zeros_like(first))
        var = torch.where(seen, second / safe - mean * mean, torch.ones_like(first))
        std = var.clamp_min(MIN_VARIANCE).sqrt()
        return mean.float(), std.float()

    def denormalize(self, values: torch.Tensor) -> torch.Tensor:
        """Raw value outputs in reward units."""
        mean, std = self._stats()
        return values * std + mean

    def normalize(self, targets: torch.Tensor) -> torch.Tensor:
        """Targets in the value head's units."""
        mean, std = self._stats()
        return (targets - mean) / std

    @torch.no_grad()
    def update(
        self,
        targets: torch.Tensor,
        average: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        """Move the statistics towards the batch ``targets`` and rescale the value head so
        that its outputs in reward units stay the same.

        Args:
            targets: this iteration's value targets (any shape).
            average: averages a tensor over the training processes (several GPUs), so that
                every process keeps the same statistics and model.
        """
        x = targets.detach().double().reshape(-1)
        batch = torch.stack([x.mean(), (x * x).mean()])
        if average is not None:
            batch = average(batch)
        old_mean, old_std = self._stats()
        d = self.decay
        self.moments[:2].mul_(d).add_(batch, alpha=1.0 - d)
        self.moments[2].mul_(d).add_(1.0 - d)
        new_mean, new_std = self._stats()
        weight, bias = self.head.weight, self.head.bias
        weight.mul_(old_std / new_std)
        bias.mul_(old_std).add_(old_mean - new_mean).div_(new_std)

    def state_dict(self) -> dict[str, Any]:
        """The statistics (CPU tensors) for a checkpoint."""
        return {"moments": self.moments.cpu(), "decay": self.decay}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s statistics (the head's weights come with the model)."""
        self.moments.copy_(state["moments"].to(self.moments.device))
        self.decay = float(state["decay"])
