"""Device-side reset of finished environments (torch ops only, no host synchronisation).

``reset_when_done`` restores the snapshot of every array pushed with
``save_copy_and_apply_at_reset=True``, zeroes the arrays pushed with ``reset_to_zero=True``, and
clears ``_done_`` and ``_timestep_`` -- for the environments whose ``_done_`` flag is set
(``mode="if_done"``) or for all of them (``mode="force_reset"``).

Every operation is an asynchronous in-place torch op (``torch.where(..., out=live)``,
``masked_fill_``) on the data manager's device; nothing reads the done flags back to the host,
so on a GPU the reset is queued on the current stream like any kernel. On a CUDA device the
``"if_done"`` reset is captured once into a CUDA graph and replayed (one launch instead of one
per array); inside someone else's graph capture it runs eagerly and is captured with it. The
same code runs on torch CPU tensors.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, CUDADataManager
from ai_economist.warp_drive.errors import require_torch

ResetMode = Literal["if_done", "force_reset"]


class CUDAEnvironmentReset:
    """Resets the device state of done environments (name kept for WarpDrive users).

    Args:
        data_manager: the ``CUDADataManager`` holding the environment state.
        use_cuda_graph: replay the ``"if_done"`` reset from a CUDA graph; default: on for CUDA
            devices. Falls back to eager ops (with a warning) if capture fails.
    """

    def __init__(self, data_manager: CUDADataManager, use_cuda_graph: bool | None = None) -> None:
        self.data_manager = data_manager
        self._torch = require_torch()
        self.use_cuda_graph = use_cuda_graph
        # The data manager itself (not its id, which a new one may reuse) and its version.
        self._cache_key: tuple[CUDADataManager, int] | None = None
        self._restore: list[tuple[Any, Any]] = []
        self._zero: list[Any] = []
        self._graph: Any = None
        self._graph_key: tuple[CUDADataManager, int] | None = None

    def _plan(self, dm: CUDADataManager):
        """(live, snapshot) pairs and zero-at-reset tensors, rebuilt only after new pushes."""
        key = (dm, dm.version)
        if (
            self._cache_key is None
            or key[0] is not self._cache_key[0]
            or key[1] != self._cache_key[1]
        ):
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
        if mode == "force_reset":
            for live, snap in restore:
                live.copy_(snap)
            for live in zero:
                live.zero_()
            dm.data_on_device_via_torch(TIMESTEP).zero_()
            dm.data_on_device_via_torch(DONE).zero_()
            return
        if self._graph_enabled(dm):
            if self._graph is not None and self._graph_key is self._cache_key:
                self._graph.replay()
                return
            self._reset_if_done(dm, restore, zero)  # the real reset; then capture for next time
            self._capture(dm, restore, zero)
            return
        self._reset_if_done(dm, restore, zero)

    def _reset_if_done(self, dm: CUDADataManager, restore, zero) -> None:
        torch = self._torch
        done = dm.data_on_device_via_torch(DONE)
        mask = done != 0  # (num_envs,) bool, stays on the device
        for live, snap in restore:
            torch.where(self._broadcast(mask, live), snap, live, out=live)
        for live in zero:
            live.masked_fill_(self._broadcast(mask, live), 0)
        dm.data_on_device_via_torch(TIMESTEP).masked_fill_(mask, 0)
        done.zero_()  # equivalent to masked_fill_(mask, 0): only done envs were non-zero

    def _graph_enabled(self, dm: CUDADataManager) -> bool:
        if dm.device.type != "cuda" or self.use_cuda_graph is False:
            return False
        return not self._torch.cuda.is_current_stream_capturing()

    def _capture(self, dm: CUDADataManager, restore, zero) -> None:
        torch = self._torch
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self._reset_if_done(dm, restore, zero)
        except Exception as exc:  # pragma: no cover - depends on the driver
            warnings.warn(
                f"CUDA graph capture of the env reset failed ({exc}); using eager ops.",
                RuntimeWarning,
                stacklevel=3,
            )
            self.use_cuda_graph = False
            self._graph = None
            return
        self._graph, self._graph_key = graph, self._cache_key

    @staticmethod
    def _broadcast(mask, like):
        return mask.view((mask.shape[0],) + (1,) * (like.dim() - 1))
