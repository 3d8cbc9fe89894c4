"""WarpDrive's continuous Tag: numpy reference, CUDA C step and Numba step."""

from ai_economist.example_envs.tag_continuous.env import TagContinuous

__all__ = ["TagContinuous"]
