"""A numpy data store for the CPU backends of ``FoundationEnvWrapper`` when torch is absent.

``pip install ai-economist`` (no extras) installs the simulator without torch.  The CPU
backends keep their trainer-facing buffers (``observations_a``, ``sampled_actions_p``,
``rewards_a``, ``_done_``, ...) in WarpDrive's ``CUDADataManager`` as torch CPU tensors when
torch is importable (the trainer needs tensors); without torch they keep the same names,
shapes and dtypes in a :class:`NumpyDataManager`, whose accessors return numpy arrays.
Everything the simulator does (``reset_all_envs``, ``step_all_envs``, ``pull``,
``pull_data_from_device``, ``state_dict``) then works; training needs ``.[train]``.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from ai_economist.warp_drive.data_manager import DONE, TIMESTEP, close_matches_message
from ai_economist.warp_drive.errors import UnknownNameError


def torch_available() -> bool:
    """Whether ``import torch`` can succeed (without importing it when it is absent)."""
    import sys

    if "torch" in sys.modules:
        return sys.modules["torch"] is not None
    return importlib.util.find_spec("torch") is not None


class NumpyDataManager:
    """Named host arrays with the read side of ``CUDADataManager``'s interface.

    ``data_on_device_via_torch(name)`` returns the live numpy array (the name is kept so
    callers work with either store); ``pull_data_from_device(name)`` a copy.

    Args:
        num_agents: agents per environment (planner included).
        episode_length: steps per episode.
        num_envs: environments stepped together.
        feed: ``{name: numpy array}`` pushed once (``_done_`` and ``_timestep_`` are added).
    """

    device = "cpu"

    def __init__(
        self, num_agents: int, episode_length: int, num_envs: int, feed: dict[str, np.ndarray]
    ) -> None:
        self.num_agents, self.episode_length, self.num_envs = num_agents, episode_length, num_envs
        self._arrays: dict[str, np.ndarray] = {
            DONE: np.zeros(num_envs, np.int32),
            TIMESTEP: np.zeros(num_envs, np.int32),
        }
        for name, value in feed.items():
            if name in self._arrays:
                raise ValueError(f"{name!r} was pushed twice to the numpy data store")
            self._arrays[name] = np.array(value, copy=True, order="C")
        self._meta = {
            "n_agents": num_agents,
            "num_agents": num_agents,
            "episode_length": episode_length,
            "num_envs": num_envs,
        }

    @property
    def names(self) -> list[str]:
        """Names of every array, ``_done_`` and ``_timestep_`` included."""
        return list(self._arrays)

    def __contains__(self, name: object) -> bool:
        return name in self._arrays

    def data_on_device_via_torch(self, name: str) -> np.ndarray:
        """The live numpy array of ``name`` (no copy; torch is not needed)."""
        try:
            return self._arrays[name]
        except KeyError:
            raise UnknownNameError(close_matches_message(name, self._arrays, "data")) from None

    device_data = data_on_device_via_torch

    def pull_data_from_device(self, name: str) -> np.ndarray:
        """A copy of ``name``."""
        return self.data_on_device_via_torch(name).copy()

    def get_shape(self, name: str) -> tuple[int, ...]:
        return self.data_on_device_via_torch(name).shape

    def get_dtype(self, name: str) -> np.dtype:
        return self.data_on_device_via_torch(name).dtype

    def meta_info(self, name: str) -> Any:
        try:
            return self._meta[name]
        except KeyError:
            raise UnknownNameError(close_matches_message(name, self._meta, "meta info")) from None
