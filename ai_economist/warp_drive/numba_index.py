"""Index arithmetic for Numba device functions.

Numba divides int64 by Python's rules: a signed 64-bit division (a long emulated sequence on
a GPU) and a fix-up of the quotient and remainder towards minus infinity. For the
non-negative indices of a flattened loop (``p`` over ``rows * cols`` cells) the quotient
and remainder are the unsigned 32-bit ones, a much shorter sequence; :func:`index_divmod`
computes them so and returns int64 values, so the arithmetic around them stays signed.

Numba types ``cuda.blockIdx.x`` and ``cuda.threadIdx.x`` as int32 that LLVM cannot prove
non-negative, so every array index made from them keeps the negative-index wraparound
(a compare, a select and an add of the runtime dimension, per index); :func:`hw_index` is the
same value as an int64 zero-extended from 32 bits, which LLVM knows is non-negative. In the
simulator it is the value itself.
"""

from __future__ import annotations

from numba import int64, uint32

from ai_economist.warp_drive.errors import cudasim_enabled, require_numba_cuda

cuda = require_numba_cuda()


@cuda.jit(device=True)
def index_divmod(p, n):
    """``(p // n, p % n)`` for ``0 <= p < 2**32`` and ``0 < n < 2**32`` (int64 results)."""
    up, un = uint32(p), uint32(n)
    q = up // un
    return int64(q), int64(up - q * un)


if cudasim_enabled():

    @cuda.jit(device=True)
    def hw_index(i):
        """A block or thread index or size (the simulator's, as it is)."""
        return i

else:

    @cuda.jit(device=True)
    def hw_index(i):
        """A block or thread index or size (``0 <= i < 2**31``) as a non-negative int64."""
        return int64(uint32(i))
