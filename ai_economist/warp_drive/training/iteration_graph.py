"""The whole training iteration replayed from one CUDA graph (``trainer.cuda_graph_update``).

At 60 envs an iteration's GPU work (a 90-step rollout and two small updates) takes about 6 ms,
but launching the update's few hundred kernels from Python takes longer than that: the host,
not the GPU, sets the pace.  Here the rollout, the episode accounting, GAE and every trained
policy's update (losses, backward, gradient clipping, Adam) are recorded once into one CUDA
graph; afterwards an iteration is one launch, plus a few small ones for the inputs that change
between iterations:

* the sampling noise (drawn from the trainer's generator before the replay, as without graphs);
* the scheduled hyper-parameters (learning rate, gamma, loss coefficients), which the graph
  reads from device tensors that are refilled when a schedule moves;
* the minibatch permutations of each epoch, drawn before the replay in the same order as
  without graphs (so the same random numbers are used);
* the iteration number, which the NaN bookkeeping records.

The optimizers read their learning rate from a device tensor and run capturable
(``capturable=True``); checkpoints store them in the ordinary form (:func:`portable_state`).
Two iterations run eagerly first (compilation, lazy initialisation, optimizer state); the
third is captured and replayed.  If the capture fails, a warning says why and the trainer goes
on with the rollout graph alone.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

from ai_economist.warp_drive.training.recurrent import update_rows

WARMUP_ITERATIONS = 2
"""Eager iterations before the capture (compiled losses traced, optimizer state created)."""


@dataclass
class StaticUpdateInputs:
    """One trained policy's update inputs that change between replays, at fixed addresses."""

    lr: torch.Tensor  # () the optimizer's learning rate
    gamma: torch.Tensor  # ()
    decay_rate: torch.Tensor  # () gamma * gae_lambda
    coeffs: torch.Tensor  # (2,) vf_loss_coeff, entropy_coeff
    orders: list[torch.Tensor] | None  # a permutation of the batch per epoch, or None
    filled: dict[str, float] = field(default_factory=dict)  # the values last written

    @classmethod
    def allocate(cls, policy: Any, batch_size: int, device: torch.device) -> StaticUpdateInputs:
        cfg = policy.config
        orders = None
        if cfg["num_mini_batches"] > 1 or cfg["num_epochs"] > 1:
            orders = [
                torch.empty(batch_size, dtype=torch.long, device=device)
                for _ in range(cfg["num_epochs"])
            ]
        scalar = {"device": device, "dtype": torch.float32}
        return cls(
            lr=torch.zeros((), **scalar),
            gamma=torch.zeros((), **scalar),
            decay_rate=torch.zeros((), **scalar),
            coeffs=torch.zeros(2, **scalar),
            orders=orders,
        )

    def fill(self, hyper: dict[str, float], gae_lambda: float) -> None:
        """Write the schedules' current values (only those that changed: no launch else)."""
        for name, value, target in (
            ("lr", hyper["lr"], self.lr),
            ("gamma", hyper["gamma"], self.gamma),
            ("decay_rate", hyper["gamma"] * gae_lambda, self.decay_rate),
            ("vf", hyper["vf_loss_coeff"], self.coeffs[0]),
            ("entropy", hyper["entropy_coeff"], self.coeffs[1]),
        ):
            if self.filled.get(name) != value:
                target.fill_(value)
                self.filled[name] = value

    def draw_orders(self, generator: torch.Generator) -> None:
        """This iteration's minibatch permutations, from ``generator`` (as the eager update
        would draw them)."""
        for order in self.orders or ():
            torch.randperm(order.numel(), generator=generator, device=order.device, out=order)


def make_capturable(optimizer: torch.optim.Optimizer, lr: torch.Tensor) -> None:
    """Let ``optimizer`` be recorded in a CUDA graph: it reads its learning rate from ``lr``
    (refilled between replays) and runs in its capturable form."""
    for group in optimizer.param_groups:
        lr.fill_(float(group["lr"]))
        group["lr"] = lr
        group["capturable"] = True


def portable_state(optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """``optimizer.state_dict()`` with a tensor learning rate written as a number and
    ``capturable`` off, so that any trainer (CPU, Lightning, no graphs) can load it."""
    state = optimizer.state_dict()
    for group in state["param_groups"]:
        if isinstance(group.get("lr"), torch.Tensor):
            group["lr"] = float(group["lr"])
            group["capturable"] = False
    return state


def wanted(trainer: Any) -> bool:
    """Whether ``trainer``'s config and setting ask for (and allow) the iteration graph."""
    tcfg = trainer.config["trainer"]
    return (
        trainer.cuda_graphs  # trainer.cuda_graphs resolved for this run
        and tcfg["cuda_graph_update"]
        and trainer.device.type == "cuda"
        and not trainer.dist.enabled  # the all-reduce stays outside graphs
        and trainer.rollout.env_capturable()
    )


class IterationGraph:
    """Captures and replays ``trainer``'s whole iteration (see the module docstring).

    The trainer calls :meth:`run` at every iteration; it returns False while the iteration
    must run eagerly (warm-up, or after a failed capture), True when the graph ran it.
    """

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.graph: torch.cuda.CUDAGraph | None = None
        self.enabled = True
        self.eager_iterations = 0
        steps, envs = trainer.num_steps, trainer.num_envs
        self.inputs = {
            tag: StaticUpdateInputs.allocate(p, update_rows(p, steps, envs), trainer.device)
            for tag, p in trainer.policies.items()
            if p.config["to_train"]
        }

    def run(self) -> bool:
        """Run one iteration from the graph (capturing it first when due)."""
        if not self.enabled:
            return False
        if self.graph is None:
            if self.eager_iterations < WARMUP_ITERATIONS:
                self.eager_iterations += 1
                return False
            if not self._capture():
                return False
        trainer = self.trainer
        rollout = trainer.rollout
        rollout.check_addresses()
        rollout.draw_noise(trainer.timer)
        self._fill_inputs()
        with trainer.timer.phase("iteration (graph)"):
            self.graph.replay()
            rollout.after_replay()
        return True

    def disable(self) -> None:
        """Stop using (and drop) the graph: every later iteration runs eagerly, with the
        rollout graph alone where ``trainer.cuda_graphs`` asks for it."""
        self.enabled = False
        self.graph = None
        self.trainer.rollout.use_graphs = self.trainer.cuda_graphs

    def recapture(self) -> None:
        """Drop the graph so that the next iteration captures it anew (after the optimizers'
        or the models' tensors were replaced, e.g. by loading a checkpoint)."""
        self.graph = None

    def _fill_inputs(self) -> None:
        trainer = self.trainer
        for tag, inputs in self.inputs.items():
            p = trainer.policies[tag]
            trainer.evaluate_schedules(p)
            inputs.fill(p.hyper, p.config["gae_lambda"])
            inputs.draw_orders(trainer.generator)

    def _capture(self) -> bool:
        trainer = self.trainer
        device = trainer.device
        for tag, inputs in self.inputs.items():
            trainer.evaluate_schedules(trainer.policies[tag])  # the capture's loss settings
            make_capturable(trainer.policies[tag].optimizer, inputs.lr)
        graph = torch.cuda.CUDAGraph()
        trainer.timer.disabled = True  # no phase timing (or synchronisation) while capturing
        try:
            torch.cuda.synchronize(device)
            with torch.cuda.graph(graph):
                trainer.rollout.capture_steps(trainer.timer)
                trainer.record_episodes()
                trainer.update_all(static=self.inputs)
        except Exception as exc:  # noqa: BLE001 - any capture failure: go on without it
            torch.cuda.synchronize(device)
            warnings.warn(
                f"trainer.cuda_graph_update: the iteration could not be captured in a CUDA "
                f"graph ({type(exc).__name__}: {exc}); replaying only the rollout from a graph",
                RuntimeWarning,
                stacklevel=4,
            )
            self.disable()
            return False
        finally:
            trainer.timer.disabled = False
        self.graph = graph
        return True
