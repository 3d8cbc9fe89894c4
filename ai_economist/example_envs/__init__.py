"""Example environments written on the generic GPU path (``ai_economist.warp_drive.scenario``).

Each lives in its own folder with its numpy reference (``env.py``), its CUDA C step, its
Numba step, its ``registration.py`` (named by an ``ai_economist.environments`` entry point in
``pyproject.toml``) and its ``run_configs/``; nothing is imported here, so
``import ai_economist.example_envs`` stays light.
"""

from ai_economist.moved_modules import deprecated_attributes

__getattr__ = deprecated_attributes(
    __name__,
    {
        "REGISTRATION_MODULES": (
            "the examples register through the entry-point group 'ai_economist.environments' "
            "(ai_economist.warp_drive.registry)",
            lambda: tuple(
                f"{__name__}.{env}.registration"
                for env in ("ring_chase", "tag_gridworld", "tag_continuous")
            ),
        )
    },
)
