"""Reset every done environment with one kernel launch (the kernel backends' ``reset_done``).

``CUDAEnvironmentReset`` resets with torch ops, one or two small kernels per array (18 for
continuous Tag); replayed from a CUDA graph they are still 18 kernels on the GPU every step.
:class:`FusedReset` does the same in one launch of ``ResetDoneEnvs``: a block owns
``RESET_ENVS_PER_BLOCK`` consecutive envs and returns at once unless one of them has
``_done_`` set; otherwise it copies the done envs' rows of every snapshot array (or its one
shared row: ``CUDADataManager.snapshot``) over the live array, zeroes their rows of every
zero-at-reset array, then clears their ``_timestep_`` and ``_done_``. The CUDA C kernel
(``kernels/reset_done_envs.cu``, pycuda) reads a device table of pointers, its Numba twin
(``reset_numba.py``) tuples of int32 and uint8 views; both move 32-bit words, or single
bytes for arrays whose per-env row is not a whole number of words (e.g. an int8
``(601, 51)`` history).

:func:`plan_reset` returns ``None`` (keep ``CUDAEnvironmentReset``) when an array is not a
contiguous ``(num_envs, ...)`` tensor (or is a bool tensor), or when a block's rows of one
array would pass ``MAX_BLOCK_UNITS``.
Nothing is read back to the host; the launch is asynchronous on torch's current stream (a CUDA
graph capture records it).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.warp_drive.backend_names import GPU_BACKENDS, EnvBackend, require
from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, CUDADataManager

RESET_KERNEL = "ResetDoneEnvs"
RESET_SOURCE = Path(__file__).resolve().parent / "kernels" / "reset_done_envs.cu"
RESET_THREADS = 128
"""Threads of a block (they stride over its envs' rows of each array)."""
RESET_ENVS_PER_BLOCK = 32
"""Environments of one block (at most ``RESET_THREADS``): their rows of an array are
contiguous, so the block's memory accesses are coalesced and the per-array work of many envs
is in flight at once."""
MAX_BLOCK_UNITS = 2**31 - 1
"""A block's rows of one array (units x envs per block) are indexed with 32-bit ints."""


@dataclass
class ResetPlan:
    """What one reset touches: int32 ``(num_envs, words)`` views of the arrays.

    Attributes:
        restore: (live, snapshot) pairs restored for done envs (int32 word views); a shared
            snapshot is a ``(1, words)`` view, read for every env.
        zero: arrays zeroed for done envs (``_done_`` and ``_timestep_`` excluded).
        restore_bytes, zero_bytes: the same for arrays whose rows are not whole words
            (uint8 ``(num_envs, bytes)`` views).
        done, timestep: the built-in ``(num_envs,)`` int32 arrays.
        version: ``CUDADataManager.version`` the plan was made for.
    """

    restore: list[tuple[Any, Any]]
    zero: list[Any]
    done: Any
    timestep: Any
    version: int
    restore_bytes: list[tuple[Any, Any]] = field(default_factory=list)
    zero_bytes: list[Any] = field(default_factory=list)


def _words(tensor: Any, num_envs: int) -> Any:
    """``tensor`` as an int32 ``(num_envs, words)`` view, or ``None`` if it is not one."""
    import torch

    if tensor.dim() == 0 or tensor.shape[0] != num_envs or not tensor.is_contiguous():
        return None
    if (tensor.numel() * tensor.element_size()) % (4 * num_envs) or tensor.dtype == torch.bool:
        return None
    try:
        return tensor.reshape(num_envs, -1).view(torch.int32)
    except RuntimeError:
        return None


def _bytes(tensor: Any, num_envs: int) -> Any:
    """``tensor`` as a uint8 ``(num_envs, bytes)`` view, or ``None`` if it is not one."""
    import torch

    if tensor.dim() == 0 or tensor.shape[0] != num_envs or not tensor.is_contiguous():
        return None
    if tensor.dtype == torch.bool:
        return None
    try:
        return tensor.reshape(num_envs, -1).view(torch.uint8)
    except RuntimeError:
        return None


def reset_grid(num_envs: int) -> tuple[int, int, int]:
    """The reset kernel's grid: one block per ``RESET_ENVS_PER_BLOCK`` envs (the last one
    may own fewer)."""
    return (-(-num_envs // RESET_ENVS_PER_BLOCK), 1, 1)


def plan_reset(dm: CUDADataManager) -> ResetPlan | None:
    """The arrays a fused reset of ``dm`` touches, or ``None`` if one does not fit it."""
    import torch

    n = dm.num_envs
    restore, zero, restore_bytes, zero_bytes = [], [], [], []
    for name in dm.reset_snapshot_names():
        if name in (DONE, TIMESTEP):
            continue  # cleared at the end of the reset anyway
        snap_rows = 1 if dm.snapshot_is_shared(name) else n
        for view, out in ((_words, restore), (_bytes, restore_bytes)):
            live = view(dm.data_on_device_via_torch(name), n)
            snap = view(dm.snapshot(name), snap_rows)
            if live is not None and snap is not None and live.shape[1] == snap.shape[1]:
                out.append((live, snap))
                break
        else:
            return None
    for name in dm.reset_zero_names():
        if name in (DONE, TIMESTEP):
            continue
        tensor = dm.data_on_device_via_torch(name)
        live = _words(tensor, n)
        if live is not None:
            zero.append(live)
        elif (live := _bytes(tensor, n)) is not None:
            zero_bytes.append(live)
        else:
            return None
    rows = [live for live, _ in restore + restore_bytes] + zero + zero_bytes
    if any(r.shape[1] * RESET_ENVS_PER_BLOCK > MAX_BLOCK_UNITS for r in rows):
        return None
    done, timestep = dm.data_on_device_via_torch(DONE), dm.data_on_device_via_torch(TIMESTEP)
    for t in (done, timestep):
        if t.dtype != torch.int32 or tuple(t.shape) != (n,):
            return None
    return ResetPlan(restore, zero, done, timestep, dm.version, restore_bytes, zero_bytes)


def reset_table(plan: ResetPlan) -> list[tuple[int, int, int, int, int]]:
    """The CUDA C kernel's table, one row per array: (live pointer, snapshot pointer or 0 to
    zero, units per env, unit size 4 or 1, 1 if the snapshot is one row shared by every env)."""

    def restored(pairs, unit):
        return [(a.data_ptr(), s.data_ptr(), a.shape[1], unit, int(s.shape[0] < a.shape[0]))
                for a, s in pairs]  # fmt: skip

    rows = restored(plan.restore, 4) + [(a.data_ptr(), 0, a.shape[1], 4, 0) for a in plan.zero]
    rows += restored(plan.restore_bytes, 1)
    rows += [(a.data_ptr(), 0, a.shape[1], 1, 0) for a in plan.zero_bytes]
    return rows


class FusedReset:
    """``reset_done`` of a kernel backend in one launch (see the module docstring).

    Args:
        data_manager: the backend's ``CUDADataManager``.
        backend: ``EnvBackend.PYCUDA`` (CUDA C kernel) or ``EnvBackend.NUMBA``.
        plan: from :func:`plan_reset` (must not be ``None``).

    Calling the object resets the done environments and returns ``True``; after new pushes
    to the data manager (its ``version`` changed) the launch is rebuilt first, and if the
    arrays no longer fit it returns ``False`` without launching (the caller resets with
    ``CUDAEnvironmentReset``).
    """

    def __init__(self, data_manager: CUDADataManager, backend: EnvBackend, plan: ResetPlan):
        self.data_manager = data_manager
        self.backend = require(backend, GPU_BACKENDS, "FusedReset")
        self._bind(plan)

    def _bind(self, plan: ResetPlan) -> None:
        self.plan = plan
        if self.backend is EnvBackend.PYCUDA:
            self._launch = self._bind_pycuda(plan)
        else:
            self._launch = self._bind_numba(plan)

    def _bind_pycuda(self, plan: ResetPlan):
        import torch

        from ai_economist.warp_drive.function_manager import CUDAFunctionManager

        rows = reset_table(plan)
        flat = [v for row in rows for v in row] or [0, 0, 0, 4, 0]
        self._table = torch.tensor(flat, dtype=torch.int64, device=plan.done.device)
        n = self.data_manager.num_envs
        fm = CUDAFunctionManager(num_agents=RESET_THREADS, num_envs=n)
        fm.compile_and_load_cuda(RESET_SOURCE)
        fm.initialize_functions([RESET_KERNEL])
        self._function_manager = fm  # keeps the module loaded
        args = (np.int32(len(rows)), np.int32(n), np.int32(RESET_ENVS_PER_BLOCK))
        return fm.bind(
            RESET_KERNEL, self._table, *args, plan.done, plan.timestep, grid=reset_grid(n)
        )

    def _bind_numba(self, plan: ResetPlan):
        import torch

        from ai_economist.warp_drive import reset_numba
        from ai_economist.warp_drive.numba_launch import bind_numba_launch
        from ai_economist.warp_drive.state import numba_arg

        n = self.data_manager.num_envs
        # empty tuples would change the kernel's types: a private scratch row stands in
        self._scratch = torch.zeros((n, 1), dtype=torch.int32, device=plan.done.device)
        self._scratch_bytes = torch.zeros((n, 1), dtype=torch.uint8, device=plan.done.device)

        def views(arrays, scratch):
            return tuple(numba_arg(a) for a in arrays) or (numba_arg(scratch),)

        words, octets = self._scratch, self._scratch_bytes
        args = (
            views([a for a, _ in plan.restore], words),
            views([s for _, s in plan.restore], words),
            views(plan.zero, words),
            views([a for a, _ in plan.restore_bytes], octets),
            views([s for _, s in plan.restore_bytes], octets),
            views(plan.zero_bytes, octets),
            np.int32(RESET_ENVS_PER_BLOCK),
            numba_arg(plan.done),
            numba_arg(plan.timestep),
        )
        return bind_numba_launch(reset_numba.ResetDoneEnvs, args, reset_grid(n), RESET_THREADS)

    def __call__(self) -> bool:
        if self.data_manager.version != self.plan.version:
            plan = plan_reset(self.data_manager)
            if plan is None:
                return False
            self._bind(plan)
        self._launch()
        return True


def fused_reset(data_manager: CUDADataManager, backend: EnvBackend) -> FusedReset | None:
    """A :class:`FusedReset` for ``data_manager``, or ``None`` where its arrays do not fit or
    the reset kernel cannot be built (with a warning; the torch reset is used then)."""
    plan = plan_reset(data_manager)
    if plan is None:
        return None
    try:
        return FusedReset(data_manager, backend, plan)
    except Exception as exc:  # noqa: BLE001 - compiler or driver specific; the torch reset works
        warnings.warn(
            f"one-launch reset unavailable ({type(exc).__name__}: {exc}); resetting done "
            "environments with CUDAEnvironmentReset",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
