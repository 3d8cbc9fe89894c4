"""Data-parallel training with ``torch.distributed``: the GPUs of one machine, or processes
on several hosts started by ``torchrun``.

Every process owns one GPU (or a share of the CPU) and its own batch of environments; after
each backward pass the gradients are averaged over the processes (one flat all-reduce per
policy), so all replicas take the same optimizer step and stay identical.  Rank 0 writes
logs and checkpoints.  NCCL is used on GPUs; gloo makes the same code path runnable on the
CPU.

Two ways in: :func:`launch` spawns ``trainer.num_gpus`` processes on this machine, and
:func:`init_from_torchrun` joins the group that ``torchrun`` set up in the environment
(``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
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
    local_rank: int | None = None  # the GPU index on this host (default: ``rank``)

    @property
    def device_index(self) -> int:
        """The GPU this process trains on (its rank among the processes of its host)."""
        return self.rank if self.local_rank is None else self.local_rank

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

    def broadcast_object(self, obj: Any) -> Any:
        """Rank 0's ``obj`` (picklable), on every process."""
        if not self.enabled:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

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


TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
"""What ``torchrun`` (``torch.distributed.run``) sets in every process it starts."""


def torchrun_environment(environ: dict[str, str] | None = None) -> dict[str, int] | None:
    """``{"rank", "world_size", "local_rank", "local_world_size"}`` when this process was
    started by ``torchrun`` (every variable of :data:`TORCHRUN_VARIABLES` set), else None.

    Raises:
        ValueError: a rank variable that is not an integer, or ranks outside the world size.
    """
    environ = os.environ if environ is None else environ
    if not all(environ.get(name) for name in TORCHRUN_VARIABLES):
        return None
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
    try:
        rank, world, local = (int(environ[name]) for name in names)
        local_world = int(environ.get("LOCAL_WORLD_SIZE", world))
    except ValueError:
        values = ", ".join(f"{n}={environ.get(n)!r}" for n in names + ("LOCAL_WORLD_SIZE",))
        raise ValueError(f"torchrun environment: expected integers, got {values}") from None
    if not (0 <= rank < world and 0 <= local < local_world <= world):
        raise ValueError(
            f"torchrun environment: RANK={rank}, LOCAL_RANK={local} must lie in "
            f"WORLD_SIZE={world}, LOCAL_WORLD_SIZE={local_world}"
        )
    return {"rank": rank, "world_size": world, "local_rank": local, "local_world_size": local_world}


def init_from_torchrun(found: dict[str, int], backend: str) -> DistributedContext:
    """Join the process group that ``torchrun`` set up (``env://`` rendezvous), picking GPU
    ``LOCAL_RANK`` when the backend is NCCL."""
    kwargs = {}
    if backend == "nccl":
        if torch.cuda.device_count() <= found["local_rank"]:
            raise RuntimeError(
                f"torchrun LOCAL_RANK={found['local_rank']} needs GPU {found['local_rank']} but "
                f"{torch.cuda.device_count()} are visible; give --nproc-per-node at most that"
            )
        torch.cuda.set_device(found["local_rank"])
        kwargs["device_id"] = torch.device("cuda", found["local_rank"])
    dist.init_process_group(
        backend, init_method="env://", rank=found["rank"], world_size=found["world_size"], **kwargs
    )
    return DistributedContext(found["rank"], found["world_size"], found["local_rank"])


def processes_on_this_host(world_size: int) -> int:
    """How many training processes share this host's cores: ``LOCAL_WORLD_SIZE`` under
    ``torchrun``, else ``world_size`` (the single-host launch)."""
    try:
        return int(os.environ.get("LOCAL_WORLD_SIZE", world_size))
    except ValueError:
        return world_size


def seed_offset(device: Any) -> int:
    """What a process adds to the env seeds so that processes simulate different episodes:
    its global rank when a process group is running, else the GPU index (0 on the CPU)."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return torch.device(device).index or 0


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
    context = torch.multiprocessing.start_processes(
        _worker,
        args=(world_size, port, backend, fn, args),
        nprocs=world_size,
        join=False,
        start_method=start_method,
    )
    with _forwarding_sigterm(context.processes):
        while not context.join():
            pass


@contextlib.contextmanager
def _forwarding_sigterm(processes: list) -> Iterator[None]:
    """While the workers run, a SIGTERM sent to the launcher alone (``kill <pid>``, a job
    scheduler) is passed on to every worker, which finishes its iteration, checkpoints and
    stops like a worker signalled itself; without this the launcher would die at once and
    leave the workers running. (Ctrl-C reaches the workers through the terminal's process
    group.) Only in the main thread, where Python delivers signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def forward(signum: int, frame: object) -> None:
        for process in processes:
            if process.is_alive():
                os.kill(process.pid, signum)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
