"""The numpy backend: every environment in host arrays, stepped by ``reference_step``.

The arrays are numpy views of the data manager's CPU tensors (``tensor.numpy()``), so the
trainer (which reads and writes the tensors) and the reference step see the same memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.backends.base import BatchedBackend
from ai_economist.warp_drive.scenario import GpuEnvironment


class NumpyBackend(BatchedBackend):
    """``num_envs`` environments stepped on the host by the numpy reference."""

    backend = EnvBackend.NUMPY

    def __init__(self, env: GpuEnvironment, num_envs: int, seed: int | None = 0) -> None:
        super().__init__(env, num_envs, seed, device="cpu")
        dm = self.data_manager
        self.arrays: dict[str, Any] = {
            f.name: dm.scalar_value(f.name) if dm.is_scalar(f.name) else self.tensor(f.name).numpy()
            for f in self.spec
        }

    def _after_reset(self) -> None:
        """``GpuEnvironment.reference_reset`` on the shared arrays (in place)."""
        self.env.reference_reset(self.arrays)

    def step(self) -> None:
        """One ``reference_step`` over the shared arrays. A reference that rebinds an entry
        instead of writing in place still works: the new values are copied back."""
        work = dict(self.arrays)
        self.env.reference_step(work)
        for name, value in work.items():
            target = self.arrays.get(name)
            if value is target:
                continue
            if not isinstance(target, np.ndarray):
                raise ValueError(
                    f"environment {self.env.name!r}: reference_step changed {name!r}, which is "
                    "not a declared per-env array (constants are read-only)"
                )
            np.copyto(target, value, casting="same_kind")
