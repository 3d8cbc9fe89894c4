"""Where the dict-API trajectory pins apply: their sha256 hashes cover float results of numpy's
``exp`` / ``log`` / ``pow``, whose last bits depend on the numpy version and on the SIMD code
numpy dispatches to. The hashes were recorded with numpy 2.4.6 on an AVX-512 (Skylake-X
and later) CPU; elsewhere the pin tests skip, saying why."""

from __future__ import annotations

import numpy as np
import pytest

RECORDED_NUMPY = "2.4.6"


def _avx512_skx() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # another numpy layout: not the recording platform
        return False
    return bool(__cpu_features__.get("AVX512_SKX"))


ON_RECORDING_PLATFORM = np.__version__ == RECORDED_NUMPY and _avx512_skx()
skip_unless_recording_platform = pytest.mark.skipif(
    not ON_RECORDING_PLATFORM,
    reason=f"hashes recorded with numpy {RECORDED_NUMPY} on an AVX-512 CPU "
    f"(here numpy {np.__version__}, AVX512_SKX={_avx512_skx()})",
)
