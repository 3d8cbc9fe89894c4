"""The host-side pieces of the iteration graph (``trainer.cuda_graph_update``), on the CPU.

The graph itself needs a GPU (``test_rollout_graph_gpu.py``); here: the update reads its
hyper-parameters and minibatch orders from tensors and gives the same result as with numbers,
GAE takes tensor discounts, the static inputs are refilled only when a schedule moves, and
checkpoints store the optimizers in their ordinary form.
"""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.training.algorithms import Batch, UpdateHyperParams, update_policy
from ai_economist.warp_drive.training.gae import compute_gae
from ai_economist.warp_drive.training.iteration_graph import (
    StaticUpdateInputs,
    make_capturable,
    portable_state,
    wanted,
)
from ai_economist.warp_drive.training.models import FullyConnectedActorCritic
from ai_economist.warp_drive.training.schema import validate_config
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

HP = UpdateHyperParams("PPO", 0.5, 0.05, 0.1, True, 10.0, True, num_epochs=2, num_mini_batches=3)


def make_batch(n=60):
    gen = torch.Generator().manual_seed(1)
    masks = torch.ones(n, 4, dtype=torch.bool)
    actions = torch.randint(0, 4, (n,), generator=gen)
    return Batch(torch.randn(n, 6, generator=gen), masks, actions, torch.full((n,), -1.4),
                 torch.randn(n, generator=gen), torch.randn(n, generator=gen))  # fmt: skip


def one_update(static: bool):
    torch.manual_seed(0)
    model = FullyConnectedActorCritic(6, 4, [16, 16])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(7)
    batch = make_batch()
    coeffs = orders = None
    if static:  # what the iteration graph does: draw the orders first, pass tensors
        coeffs = torch.tensor([HP.vf_loss_coeff, HP.entropy_coeff])
        orders = [torch.empty(60, dtype=torch.long) for _ in range(HP.num_epochs)]
        for order in orders:
            torch.randperm(60, generator=gen, out=order)
    stats, _ = update_policy(model, optimizer, batch, HP, gen, coeffs=coeffs, orders=orders)
    return stats, [p.detach().clone() for p in model.parameters()]


def test_the_update_with_pre_drawn_orders_and_tensor_coefficients_is_the_same_update():
    stats_numbers, weights_numbers = one_update(static=False)
    stats_tensors, weights_tensors = one_update(static=True)
    assert torch.equal(stats_numbers, stats_tensors)
    for a, b in zip(weights_numbers, weights_tensors, strict=True):
        assert torch.equal(a, b)
    assert stats_numbers[0] != 0.0  # a real loss


@pytest.mark.parametrize("method", ["loop", "matrix"])
def test_gae_with_tensor_discounts_equals_gae_with_numbers(method):
    gen = torch.Generator().manual_seed(3)
    rewards, values = torch.randn(9, 3, 2, generator=gen), torch.randn(9, 3, 2, generator=gen)
    last = torch.randn(3, 2, generator=gen)
    dones = torch.zeros(9, 3)
    dones[4, 1] = 1.0
    gamma, lam = 0.98, 0.95
    numbers = compute_gae(rewards, values, dones, last, gamma, lam, method)
    tensors = compute_gae(
        rewards, values, dones, last, torch.tensor(gamma), lam, method,
        decay_rate=torch.tensor(gamma * lam),
    )  # fmt: skip
    for a, b in zip(numbers, tensors, strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-6)
    assert not torch.equal(numbers[0], compute_gae(rewards, values, dones, last, 0.5, lam)[0])


class CountingTensor:
    """Wraps a tensor and counts ``fill_`` calls (the host launches of a refill)."""

    def __init__(self, tensor):
        self.tensor, self.fills = tensor, 0

    def fill_(self, value):
        self.fills += 1
        return self.tensor.fill_(value)


def test_static_inputs_are_refilled_only_when_a_schedule_moves():
    policy = type("P", (), {"config": {"num_mini_batches": 1, "num_epochs": 1}})()
    inputs = StaticUpdateInputs.allocate(policy, 10, torch.device("cpu"))
    assert inputs.orders is None  # one minibatch, one epoch: no permutation
    inputs.lr = CountingTensor(inputs.lr)
    hyper = {"lr": 1e-3, "gamma": 0.9, "vf_loss_coeff": 0.5, "entropy_coeff": 0.05}
    inputs.fill(hyper, gae_lambda=0.5)
    assert inputs.lr.fills == 1 and float(inputs.lr.tensor) == pytest.approx(1e-3)
    assert float(inputs.decay_rate) == pytest.approx(0.45)
    assert inputs.coeffs.tolist() == pytest.approx([0.5, 0.05])
    inputs.fill(hyper, gae_lambda=0.5)
    assert inputs.lr.fills == 1  # unchanged: no new launch
    inputs.fill({**hyper, "lr": 5e-4}, gae_lambda=0.5)
    assert inputs.lr.fills == 2 and float(inputs.lr.tensor) == pytest.approx(5e-4)


def test_minibatch_orders_come_from_the_generator_like_the_eager_draws():
    policy = type("P", (), {"config": {"num_mini_batches": 4, "num_epochs": 3}})()
    inputs = StaticUpdateInputs.allocate(policy, 50, torch.device("cpu"))
    inputs.draw_orders(torch.Generator().manual_seed(11))
    gen = torch.Generator().manual_seed(11)
    expected = [torch.randperm(50, generator=gen) for _ in range(3)]
    assert len(inputs.orders) == 3
    for order, want in zip(inputs.orders, expected, strict=True):
        assert torch.equal(order, want)


def test_checkpoints_store_a_capturable_optimizer_in_the_ordinary_form():
    model = FullyConnectedActorCritic(6, 4, [8])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    lr = torch.zeros(())
    make_capturable(optimizer, lr)
    group = optimizer.param_groups[0]
    assert group["lr"] is lr and float(lr) == pytest.approx(3e-4) and group["capturable"]
    saved = portable_state(optimizer)["param_groups"][0]
    assert isinstance(saved["lr"], float) and saved["lr"] == pytest.approx(3e-4)
    assert saved["capturable"] is False
    assert optimizer.param_groups[0]["lr"] is lr  # the live optimizer keeps its tensor
    fresh = torch.optim.Adam(model.parameters(), lr=1.0)
    fresh.load_state_dict(portable_state(optimizer))
    assert fresh.param_groups[0]["lr"] == pytest.approx(3e-4)


def test_the_iteration_graph_is_on_by_default_and_off_on_the_cpu(tmp_path):
    config = toy_run_config(cuda_graphs=True)
    assert validate_config(config)["trainer"]["cuda_graph_update"] is True
    env = ToyTargetEnv(num_envs=config["trainer"]["num_envs"], **config["env"])
    agents = {"a": ["0", "1", "2"], "p": ["p"]}
    trainer = Trainer(env, config, agents, True, "first", results_directory=tmp_path)
    assert not wanted(trainer) and trainer.iteration_graph is None
    trainer.train_iteration()  # the eager iteration, as before
    assert trainer._iteration_number.item() == 1.0
    trainer.graceful_close()
