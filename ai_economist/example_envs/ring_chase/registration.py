"""Registers ring chase with the kernel registry and the training registry (on import)."""

from ai_economist.example_envs.ring_chase.env import RingChase
from ai_economist.warp_drive.registrar import register_gpu_environment

register_gpu_environment(RingChase)
