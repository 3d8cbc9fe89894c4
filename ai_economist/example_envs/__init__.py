"""Example environments written on the generic GPU path (``ai_economist.warp_drive.scenario``).

Each lives in its own folder with its numpy reference (``env.py``), its CUDA C step and its
Numba step; nothing is imported here, so ``import ai_economist.example_envs`` stays light.
"""

REGISTRATION_MODULES: tuple[str, ...] = (
    "ai_economist.example_envs.ring_chase.registration",
    "ai_economist.example_envs.tag_gridworld.registration",
    "ai_economist.example_envs.tag_continuous.registration",
)
"""Modules that register the example environments (imported lazily by the registries)."""
