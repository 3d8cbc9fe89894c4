"""Registers ring chase with the kernel registry and the training registry (on import)."""

from ai_economist.example_envs.ring_chase.env import RingChase, register
from ai_economist.training.environments import register_gpu_training_env

register()
register_gpu_training_env(RingChase)
