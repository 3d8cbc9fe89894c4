"""Example environments written on the generic GPU path (``ai_economist.warp_drive.scenario``).

Each lives in its own folder with its numpy reference (``env.py``), its CUDA C step, its
Numba step, its ``registration.py`` (named by an ``ai_economist.environments`` entry point in
``pyproject.toml``) and its ``run_configs/``; nothing is imported here, so
``import ai_economist.example_envs`` stays light.
"""
