"""Device-side reset of finished environments (torch ops only, no host synchronisation).

``reset_when_done`` restores the snapshot of every array pushed with
``save_copy_and_apply_at_reset=True``, zeroes the arrays pushed with ``reset_to_zero=True``, and
clears ``_done_`` and ``_timestep_`` -- for the environments whose ``_done_`` flag is set
(``mode="if_done"``) or for all of them (``mode="force_reset"``).

Every operation is an asynchronous in-place torch op (``torch.where`` + ``copy_``,
``masked_fill_``) on the data manager's device; nothing reads the done flags back to the host,
so on a GPU the reset is queued on the current stream like any kernel (and can be captured in a
CUDA graph). The same code runs on torch CPU tensors.
"""

from __future__ import annotations

from typing import Literal

from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, CUDADataManager
from ai_economist.warp_drive.errors import require_torch

ResetMode = Literal["if_done", "force_reset"]


class CUDAEnvironmentReset:
    """Resets the device state of done environments (name kept for WarpDrive users).

    Args:
        data_manager: the ``CUDADataManager`` holding the environment state.
    """

    def __init__(self, data_manager: CUDADataManager) -> None:
        self.data_manager = data_manager
        self._torch = require_torch()
        self._cache_key: tuple[int, int] | None = None
        self._restore: list[tuple[object, object]] = []
        self._zero: list[object] = []

    def _plan(self, dm: CUDADataManager):
        """(live, snapshot) pairs and zero-at-reset tensors, rebuilt only after new pushes."""
        key = (id(dm), dm.version)
        if key != self._cache_key:
            self._restore = [
                (dm.data_on_device_via_torch(n), dm.snapshot(n)) for n in dm.reset_snapshot_names()
            ]
            self._zero = [
                dm.data_on_device_via_torch(n)
                for n in dm.reset_zero_names()
                if n not in (DONE, TIMESTEP)
            ]
            self._cache_key = key
        return self._restore, self._zero

    def reset_when_done(
        self, data_manager: CUDADataManager | None = None, mode: ResetMode = "if_done"
    ) -> None:
        """Restore the reset state of done environments (``"if_done"``) or of all of them
        (``"force_reset"``); ``_done_`` and ``_timestep_`` are set to 0 for those envs."""
        dm = self.data_manager if data_manager is None else data_manager
        if mode not in ("if_done", "force_reset"):
            raise ValueError(f"mode must be 'if_done' or 'force_reset', got {mode!r}.")
        restore, zero = self._plan(dm)
        done = dm.data_on_device_via_torch(DONE)
        timestep = dm.data_on_device_via_torch(TIMESTEP)
        if mode == "force_reset":
            for live, snap in restore:
                live.copy_(snap)
            for live in zero:
                live.zero_()
            timestep.zero_()
            done.zero_()
            return
        mask = done != 0  # (num_envs,) bool, stays on the device
        for live, snap in restore:
            live.copy_(self._torch.where(self._broadcast(mask, live), snap, live))
        for live in zero:
            live.masked_fill_(self._broadcast(mask, live), 0)
        timestep.masked_fill_(mask, 0)
        done.masked_fill_(mask, 0)

    @staticmethod
    def _broadcast(mask, like):
        return mask.view((mask.shape[0],) + (1,) * (like.dim() - 1))
