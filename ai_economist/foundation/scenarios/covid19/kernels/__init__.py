"""The COVID-19 scenario's kernels: CUDA C (``covid19_build.cu`` and the files it includes)
and their Numba twins (``covid19_numba``, ``covid19_numba_fused``)."""
