"""``trainer.compile_update``: the compiled minibatch loss trains like the eager one."""

from __future__ import annotations

import torch

from ai_economist.warp_drive.training.algorithms import Batch, UpdateHyperParams, update_policy
from ai_economist.warp_drive.training.models import FullyConnectedActorCritic


def two_updates(compiled: bool, entropy_coeffs=(0.05, 0.2)):
    torch.manual_seed(0)
    model = FullyConnectedActorCritic(6, 4, [16, 16])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(1)
    n = 60
    masks = torch.ones(n, 4, dtype=torch.bool)
    masks[::3, 2] = False
    actions = torch.randint(0, 4, (n,), generator=gen)
    actions[::3] = 1  # an allowed action where action 2 is masked
    batch = Batch(torch.randn(n, 6, generator=gen), masks, actions, torch.full((n,), -1.4),
                  torch.randn(n, generator=gen), torch.randn(n, generator=gen))  # fmt: skip
    stats = []
    for entropy_coeff in entropy_coeffs:  # a schedule's new value: no re-trace, same maths
        hp = UpdateHyperParams("PPO", 1.0, entropy_coeff, 0.1, True, 10.0, True, 2, 3)
        stats.append(update_policy(model, optimizer, batch, hp, gen, compile_loss=compiled)[0])
    return stats, [p.detach().clone() for p in model.parameters()]


def test_compiled_loss_gives_the_eager_statistics_and_weights():
    eager_stats, eager_weights = two_updates(compiled=False)
    compiled_stats, compiled_weights = two_updates(compiled=True)
    for eager, compiled in zip(eager_stats, compiled_stats, strict=True):
        assert torch.allclose(eager, compiled, atol=1e-5)
    assert eager_stats[0][3] > 1.0  # the entropy of near-uniform policies: a real loss
    for eager, compiled in zip(eager_weights, compiled_weights, strict=True):
        assert torch.allclose(eager, compiled, atol=1e-5)
