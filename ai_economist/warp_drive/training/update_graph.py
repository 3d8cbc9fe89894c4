"""Each trained policy's PPO/A2C update replayed from a CUDA graph (``trainer.update_graphs``).

At small batches (60 envs) the update is bound by kernel launches and Python: a forward and
backward pass of a small MLP, gradient clipping and an Adam step are a few hundred small
kernels.  With ``trainer.update_graphs`` on (CUDA only) each trained policy's update is
recorded once as a CUDA graph and replayed at every later iteration:

* the first update of a policy runs eagerly (it allocates the gradients and Adam's state,
  initialises cuBLAS and, with ``compile_update``, compiles the loss);
* the second is captured (capture executes nothing) on static copies of the batch
  (:class:`~.algorithms.Batch`), then replayed at once; later updates copy the iteration's
  batch into those copies (``copy_``) and replay;
* what changes between iterations is read from device tensors: the learning rate (Adam with
  ``capturable=True`` and a tensor ``lr``, its step counter on the device) and the value and
  entropy coefficients (a tensor of two); the gradients are zeroed in place
  (``set_to_none=False``) so that they stay where the graph recorded them;
* the statistics and the non-finite flag are the graph's static outputs, read after replay
  (no host synchronisation).

The update runs eagerly, as without the key, on the CPU (silently), across processes, with a
Lightning ``backward`` or Lightning's optimizers, with several minibatches or epochs (their
shuffle draws from the trainer's generator, which the graph does not record), or when the
capture fails (each with one warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields

import torch
from torch import nn

from ai_economist.warp_drive.training.algorithms import Batch, UpdateHyperParams, update_policy


def make_optimizer(model: nn.Module, lr: float, capturable: bool) -> torch.optim.Adam:
    """The policy's Adam (fused on CUDA); ``capturable``: its learning rate is a device tensor
    and its step counter lives on the device, so that a CUDA graph can record its step."""
    device = next(model.parameters()).device
    fused = device.type == "cuda"  # one kernel for all parameters (same algorithm)
    if capturable:
        lr_tensor = torch.tensor(float(lr), dtype=torch.float32, device=device)
        return torch.optim.Adam(
            model.parameters(), lr=lr_tensor, eps=1e-5, fused=fused, capturable=True
        )
    return torch.optim.Adam(model.parameters(), lr=lr, eps=1e-5, fused=fused)


@dataclass
class _Recorded:
    """One policy's recorded update and what it was recorded for."""

    graph: torch.cuda.CUDAGraph
    key: tuple
    batch: Batch  # static inputs: the trainer's batch is copied into these
    stats: torch.Tensor  # static outputs
    nonfinite: torch.Tensor


class PolicyUpdateGraph:
    """The update of one policy: eager once, then captured and replayed."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, device: torch.device):
        self.model = model
        self.optimizer = optimizer
        self.coeffs = torch.zeros(2, device=device)  # (vf_loss_coeff, entropy_coeff)
        self.warm = False  # one eager update ran
        self.recorded: _Recorded | None = None
        self.captures = 0
        self.replays = 0

    def _step(self, batch: Batch, hp: UpdateHyperParams, compile_loss: bool):
        return update_policy(
            self.model, self.optimizer, batch, hp, compile_loss=compile_loss,
            coeffs=self.coeffs, set_to_none=False,
        )  # fmt: skip

    def run(
        self, batch: Batch, hp: UpdateHyperParams, compile_loss: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The update of ``batch`` (eager, captured-and-replayed, or replayed).

        Raises whatever the capture raised (the caller falls back to eager updates)."""
        self.coeffs[0].fill_(hp.vf_loss_coeff)
        self.coeffs[1].fill_(hp.entropy_coeff)
        if not self.warm:
            self.warm = True
            return self._step(batch, hp, compile_loss)
        inputs = [getattr(batch, f.name) for f in fields(Batch)]
        layout = tuple((x.shape, x.dtype) for x in inputs)
        key = (hp.loss_settings(), hp.clip_grad_norm, hp.max_grad_norm, compile_loss, layout)
        rec = self.recorded
        if rec is None or rec.key != key:
            rec = self.recorded = self._capture(batch, hp, compile_loss, key)
        else:
            for f, x in zip(fields(Batch), inputs, strict=True):
                getattr(rec.batch, f.name).copy_(x)
        rec.graph.replay()
        self.replays += 1
        return rec.stats, rec.nonfinite

    def _capture(
        self, batch: Batch, hp: UpdateHyperParams, compile_loss: bool, key: tuple
    ) -> _Recorded:
        static = Batch(*(getattr(batch, f.name).clone() for f in fields(Batch)))
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                stats, nonfinite = self._step(static, hp, compile_loss)
        except Exception:
            torch.cuda.synchronize()
            raise
        self.captures += 1
        return _Recorded(graph, key, static, stats, nonfinite)


class UpdateGraphs:
    """The trainer's ``trainer.update_graphs``: per policy tag, a :class:`PolicyUpdateGraph`,
    or the eager :func:`~.algorithms.update_policy` where a graph cannot be used.

    Args:
        requested: ``trainer.update_graphs``.
        device: the training device (graphs only on CUDA; silently eager elsewhere).
        distributed: training across processes (eager, with a warning: the all-reduce).
    """

    def __init__(self, requested: bool, device: torch.device, distributed: bool) -> None:
        self.device = device
        cuda = requested and device.type == "cuda"
        self.enabled = cuda and not distributed
        self.graphs: dict[str, PolicyUpdateGraph] = {}
        self._warned: set[str] = set()
        if cuda and distributed:
            self._warn("all", "training across processes (the gradients' all-reduce)")

    @property
    def captures(self) -> dict[str, int]:
        """Per policy tag, how often its update was captured (1 in a normal run)."""
        return {tag: g.captures for tag, g in self.graphs.items()}

    @property
    def replays(self) -> dict[str, int]:
        """Per policy tag, how often its update graph was replayed."""
        return {tag: g.replays for tag, g in self.graphs.items()}

    def _warn(self, tag: str, reason: str) -> None:
        if tag in self._warned:
            return
        self._warned.add(tag)
        where = "every policy" if tag == "all" else f"policy '{tag}'"
        warnings.warn(
            f"trainer.update_graphs: {where} updates eagerly ({reason})",
            RuntimeWarning,
            stacklevel=4,
        )

    def set_lr(self, optimizer: torch.optim.Optimizer, lr: float) -> None:
        """Set the learning rate of every parameter group: a device tensor filled in place when
        graphs are on (what the graph reads), else the number.  Also makes each group
        ``capturable`` exactly when graphs are on (a restored optimizer state may say
        otherwise)."""
        for group in optimizer.param_groups:
            group["capturable"] = self.enabled
            current = group["lr"]
            if not self.enabled:
                group["lr"] = lr
            elif (
                isinstance(current, torch.Tensor)
                and current.device == group["params"][0].device
                and current.dtype == torch.float32
            ):
                current.fill_(lr)
            else:  # before the capture only (a restored state's CPU tensor, or a number)
                group["lr"] = torch.tensor(float(lr), device=group["params"][0].device)

    def update(
        self,
        tag: str,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        batch: Batch,
        hp: UpdateHyperParams,
        generator: torch.Generator | None = None,
        sync_gradients: Callable[[nn.Module], None] | None = None,
        backward: Callable[[torch.Tensor], None] | None = None,
        compile_loss: bool = False,
        own_optimizer: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One policy's update: from its graph where possible, else eagerly (as
        :func:`~.algorithms.update_policy`, which takes the same arguments)."""
        reason = self._eager_reason(hp, sync_gradients, backward, own_optimizer)
        if reason is None and tag not in self._warned:
            graph = self.graphs.get(tag)
            if graph is None:
                graph = self.graphs[tag] = PolicyUpdateGraph(model, optimizer, self.device)
            try:
                return graph.run(batch, hp, compile_loss)
            except Exception as exc:  # noqa: BLE001 - any capture failure: update eagerly
                reason = f"the capture failed: {type(exc).__name__}: {exc}"
        if reason is not None and self.enabled:
            self._warn(tag, reason)
        return update_policy(
            model, optimizer, batch, hp, generator, sync_gradients, backward,
            compile_loss=compile_loss,
        )  # fmt: skip

    def _eager_reason(
        self,
        hp: UpdateHyperParams,
        sync_gradients: Callable | None,
        backward: Callable | None,
        own_optimizer: bool,
    ) -> str | None:
        """Why this update cannot be replayed from a graph (None: it can)."""
        if not self.enabled:
            return "off"
        if sync_gradients is not None:
            return "training across processes (the gradients' all-reduce)"
        if backward is not None or not own_optimizer:
            return "Lightning computes the gradients and steps the optimizers"
        if hp.num_mini_batches > 1 or hp.num_epochs > 1:
            return (
                "num_mini_batches or num_epochs > 1: the minibatch shuffle is not recorded; "
                "set both to 1 for a graph"
            )
        return None
