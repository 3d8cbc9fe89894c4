"""``reset_numba.ResetDoneEnvs`` (and its device functions) type-check and lower to LLVM for a
real sm_90 target, without a GPU: the CUDA simulator of the other reset tests runs the kernel as
Python and cannot catch typing errors of the real Numba CUDA compiler. Same method as
``tests/foundation/scenarios/covid19/test_numba_lowering.py`` (compile_cuda in a subprocess
with ``NUMBA_ENABLE_CUDASIM=0``, the device's compute capability faked)."""

from __future__ import annotations

import pytest
from numba_lowering import lower_in_subprocess

pytest.importorskip("numba")

BODY = """
    from ai_economist.warp_drive import reset_numba

    words, row_bytes = types.Array(types.int32, 2, "A"), types.Array(types.uint8, 2, "A")
    flags = types.Array(types.int32, 1, "C")
    for n_words, n_bytes in ((2, 1), (1, 0)):  # with byte rows; with none (empty tuples)
        w, b = types.UniTuple(words, n_words), types.UniTuple(row_bytes, n_bytes)
        zero_w, zero_b = types.UniTuple(words, 1), types.UniTuple(row_bytes, n_bytes)
        args = (w, w, zero_w, b, b, zero_b, types.int32, flags, flags)
        compiler.compile_cuda(reset_numba.ResetDoneEnvs.py_func, types.void, args, cc=(9, 0))
        print("lowered", n_words, n_bytes)
"""


def test_reset_kernel_lowers_for_sm90():
    out = lower_in_subprocess(BODY)
    assert out.split() == ["lowered", "2", "1", "lowered", "1", "0"], out
