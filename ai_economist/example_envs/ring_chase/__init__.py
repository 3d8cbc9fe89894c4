"""Ring chase: chasers and runners on a ring of cells (a small two-policy example env)."""

from ai_economist.example_envs.ring_chase.env import RingChase

__all__ = ["RingChase"]
