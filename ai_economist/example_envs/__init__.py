"""Example environments written on the generic GPU path (``ai_economist.warp_drive.scenario``).

Each lives in its own folder with its numpy reference (``env.py``), its CUDA C step, its
Numba step, its ``registration.py`` (named by an ``ai_economist.environments`` entry point in
``pyproject.toml``) and its ``run_configs/``; nothing is imported here, so
``import ai_economist.example_envs`` stays light.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "REGISTRATION_MODULES":
        import warnings

        warnings.warn(
            "ai_economist.example_envs.REGISTRATION_MODULES is deprecated: the examples register "
            "through the entry-point group 'ai_economist.environments' "
            "(ai_economist.warp_drive.registry)",
            DeprecationWarning,
            stacklevel=2,
        )
        return tuple(
            f"{__name__}.{env}.registration"
            for env in ("ring_chase", "tag_gridworld", "tag_continuous")
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
