"""Data-parallel training over the GPUs of one machine with ``torch.distributed``.

Every process owns one GPU and its own batch of environments; after each backward pass the
gradients are averaged over the processes (one flat all-reduce per policy), so all replicas
take the same optimizer step and stay identical.  Rank 0 writes logs and checkpoints.
NCCL is used on GPUs; gloo makes the same code path runnable on the CPU.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class DistributedContext:
    """Rank and world size of this process (``world_size == 1``: no communication)."""

    rank: int = 0
    world_size: int = 1

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def average_gradients(self, model: nn.Module) -> None:
        """Replace every gradient of ``model`` by its mean over the processes."""
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        if not self.enabled or not grads:
            return
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        flat /= self.world_size
        offset = 0
        for g in grads:
            g.copy_(flat[offset : offset + g.numel()].view_as(g))
            offset += g.numel()

    def broadcast_parameters(self, model: nn.Module) -> None:
        """Copy rank 0's parameters to every process."""
        if self.enabled:
            for p in model.parameters():
                dist.broadcast(p.data, src=0)

    def sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """The element-wise sum of ``tensor`` over the processes (a new tensor)."""
        out = tensor.clone()
        if self.enabled:
            dist.all_reduce(out, op=dist.ReduceOp.SUM)
        return out

    def mean(self, tensor: torch.Tensor) -> torch.Tensor:
        """The element-wise mean of ``tensor`` over the processes (a new tensor)."""
        return self.sum(tensor) / self.world_size

    def min(self, tensor: torch.Tensor) -> torch.Tensor:
        """The element-wise minimum of ``tensor`` over the processes (a new tensor)."""
        out = tensor.clone()
        if self.enabled:
            dist.all_reduce(out, op=dist.ReduceOp.MIN)
        return out

    def gather(self, obj: Any) -> list[Any]:
        """Every process's ``obj`` (picklable), in rank order."""
        if not self.enabled:
            return [obj]
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()


def free_port() -> int:
    """An unused TCP port on localhost for the rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init_process(rank: int, world_size: int, port: int, backend: str) -> DistributedContext:
    """Join the process group (and pick this rank's GPU when the backend is NCCL)."""
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(port)
    kwargs = {}
    if backend == "nccl":
        torch.cuda.set_device(rank)
        kwargs["device_id"] = torch.device("cuda", rank)
    dist.init_process_group(backend, rank=rank, world_size=world_size, **kwargs)
    return DistributedContext(rank, world_size)


def shutdown() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _worker(rank: int, world_size: int, port: int, backend: str, fn: Callable, args: tuple) -> None:
    ctx = init_process(rank, world_size, port, backend)
    try:
        fn(ctx, *args)
        ctx.barrier()  # every rank is done with the group before any rank tears it down
    finally:
        shutdown()


def launch(
    fn: Callable[..., None],
    world_size: int,
    args: tuple = (),
    backend: str = "nccl",
    start_method: str = "spawn",
) -> None:
    """Run ``fn(ctx, *args)`` in ``world_size`` processes (one per GPU for NCCL).

    ``fn`` must be importable (defined at module level) when the workers are spawned;
    ``start_method="fork"`` (CPU/gloo only, e.g. in tests) skips re-importing torch.
    """
    if backend == "nccl" and torch.cuda.device_count() < world_size:
        raise RuntimeError(
            f"--num_gpus {world_size} asks for {world_size} GPUs but "
            f"{torch.cuda.device_count()} are visible"
        )
    port = free_port()
    torch.multiprocessing.start_processes(
        _worker,
        args=(world_size, port, backend, fn, args),
        nprocs=world_size,
        join=True,
        start_method=start_method,
    )
