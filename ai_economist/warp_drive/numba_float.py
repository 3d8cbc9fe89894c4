"""Float helpers for Numba kernels that must equal their numpy reference bit for bit.

The CUDA compilers contract ``a + b * c`` into one fused multiply-add (one rounding instead
of numpy's two) unless told not to; libNVVM, which Numba uses, has no per-kernel switch for
it. ``mul_rn(a, b)`` is the product rounded on its own (libdevice's ``dmul_rn``, the twin of
CUDA C's ``__dmul_rn``), so a sum of products rounds as numpy's does. Under Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``) the arithmetic is Python's, which never fuses.
"""

from __future__ import annotations

from numba import cuda

from ai_economist.warp_drive.errors import cudasim_enabled

if cudasim_enabled():

    @cuda.jit(device=True)
    def mul_rn(a, b):
        """``a * b`` (the simulator's arithmetic never fuses)."""
        return a * b

else:
    from numba.cuda import libdevice

    @cuda.jit(device=True)
    def mul_rn(a, b):
        """``a * b`` rounded to float64 on its own: never fused into a following add."""
        return libdevice.dmul_rn(a, b)
