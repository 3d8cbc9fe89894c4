"""The COVID-19 scenario's kernels beyond 1.7.1's: the fused CUDA C step
(``covid19_fused_step.cu``), the header the CUDA C files share (``covid19_common.cuh``) and
the Numba twins (``covid19_numba``, ``covid19_numba_fused``).  1.7.1's CUDA C files keep their
paths: the build entry ``covid19_build.cu`` and ``covid19_env_step.cu`` in the scenario folder,
``covid19_components_step.cu`` in ``foundation/components/``."""
