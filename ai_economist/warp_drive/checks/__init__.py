"""Checks users run on their own environments: declaration checks and reference parity.

``check_parity(env, "numba", num_envs=4, num_steps=50)`` (``checks.parity``) compares a
backend with the numpy reference; ``checks.declaration`` holds the checks every backend runs
before it allocates anything.
"""

from ai_economist.warp_drive.checks.declaration import EnvironmentDeclarationError

__all__ = [
    "EnvironmentDeclarationError",
    "ParityCase",
    "ParityResult",
    "check_case",
    "check_parity",
]


def __getattr__(name: str):
    """``ParityResult``, ``ParityCase``, ``check_parity`` and ``check_case`` from ``checks.parity``, imported on first use (so
    that ``python -m ai_economist.warp_drive.checks.parity`` runs the module only once)."""
    if name in ("ParityCase", "ParityResult", "check_case", "check_parity"):
        from ai_economist.warp_drive.checks import parity

        return getattr(parity, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
