"""Registers continuous Tag with the kernel registry and the training registry (on import)."""

from __future__ import annotations

from ai_economist.example_envs.tag_continuous.env import TagContinuous
from ai_economist.training.environments import register_gpu_training_env


def register(registrar=None) -> None:
    """Register ``TagContinuous`` for the numpy, pycuda and numba backends (default registrar)."""
    from ai_economist.warp_drive.registrar import default_registrar

    registrar = default_registrar if registrar is None else registrar
    kernels = TagContinuous().kernels()
    registrar.add_env(
        TagContinuous,
        env_backend=("numpy", "pycuda", "numba"),
        cuda_env_src_path={"pycuda": kernels.cuda_source, "numba": kernels.numba_module},
    )


register()
register_gpu_training_env(TagContinuous)
