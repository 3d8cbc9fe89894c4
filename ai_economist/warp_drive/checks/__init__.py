"""Checks users run on their own environments: declaration checks and reference parity.

``check_parity(env, "numba", num_envs=4, num_steps=50)`` (``checks.parity``) compares a
backend with the numpy reference; ``checks.declaration`` holds the checks every backend runs
before it allocates anything.
"""

from ai_economist.warp_drive.checks.declaration import EnvironmentDeclarationError
from ai_economist.warp_drive.checks.parity import ParityResult, check_parity

__all__ = ["EnvironmentDeclarationError", "ParityResult", "check_parity"]
