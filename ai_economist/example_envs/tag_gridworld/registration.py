"""Registers grid-world Tag with the kernel registry and the training registry (on import)."""

from ai_economist.example_envs.tag_gridworld.env import TagGridWorld
from ai_economist.warp_drive.registrar import register_gpu_environment

register_gpu_environment(TagGridWorld)
