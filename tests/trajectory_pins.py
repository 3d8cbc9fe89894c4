"""Where the dict-API trajectory pins apply: their sha256 hashes cover float results of numpy's
``exp`` / ``log`` / ``pow``, whose last bits depend on the numpy version and on the SIMD code
numpy dispatches to. The hashes were recorded with numpy 2.4.6 on an AVX-512 (Skylake-X
and later) CPU; elsewhere the pin tests skip, saying why."""

from __future__ import annotations

from typing import Any

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


def feed_canonically(h: Any, value: Any) -> None:
    """Feed ``value`` (nested dicts/lists/arrays/scalars) into ``h`` canonically, with types."""
    if isinstance(value, dict):
        h.update(b"{")
        for key in sorted(value, key=str):
            h.update(repr(key).encode())
            feed_canonically(h, value[key])
        h.update(b"}")
    elif isinstance(value, (list, tuple)):
        h.update(b"[" if isinstance(value, list) else b"(")
        for item in value:
            feed_canonically(h, item)
        h.update(b"]")
    elif isinstance(value, np.ndarray):
        h.update(f"nd{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, np.generic):
        h.update(f"np{value.dtype.str}".encode() + value.tobytes())
    else:
        h.update(f"{type(value).__name__}:{value!r}".encode())
