"""Registers grid-world Tag with the kernel registry and the training registry (on import)."""

from ai_economist.example_envs.tag_gridworld.env import TagGridWorld, register
from ai_economist.training.environments import register_gpu_training_env

register()
register_gpu_training_env(TagGridWorld)
