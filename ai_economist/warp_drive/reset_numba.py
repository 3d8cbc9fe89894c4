"""The Numba twin of ``kernels/reset_done_envs.cu``: reset every done environment in one launch.

Arrays come as tuples of int32 ``(num_envs, words)`` views (see ``fused_reset``): ``live`` with
their ``snapshot`` rows, ``zero`` to be zeroed; the ``*_bytes`` tuples hold uint8
``(num_envs, bytes)`` views of arrays whose rows are not whole words. Launch with grid
``num_envs``.
"""

from __future__ import annotations

from ai_economist.warp_drive.errors import require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels


@cuda.jit(device=True)
def _restore_rows(env, dsts, srcs):
    """Row ``env`` of every ``dsts[a]`` copied from ``srcs[a]`` (the block's threads stride)."""
    for a in range(len(dsts)):
        dst, src = dsts[a], srcs[a]
        for i in range(cuda.threadIdx.x, dst.shape[1], cuda.blockDim.x):
            dst[env, i] = src[env, i]


@cuda.jit(device=True)
def _zero_rows(env, dsts):
    """Row ``env`` of every ``dsts[a]`` set to 0 (the block's threads stride)."""
    for a in range(len(dsts)):
        dst = dsts[a]
        for i in range(cuda.threadIdx.x, dst.shape[1], cuda.blockDim.x):
            dst[env, i] = 0


@cuda.jit
def ResetDoneEnvs(live, snapshot, zero, live_bytes, snapshot_bytes, zero_bytes, _done_, _timestep_):
    """Block ``env``: if ``_done_[env]``, restore its rows, zero the others, clear time/done."""
    env = cuda.blockIdx.x
    if _done_[env] == 0:  # the same for every thread of the block
        return
    _restore_rows(env, live, snapshot)
    _zero_rows(env, zero)
    _restore_rows(env, live_bytes, snapshot_bytes)
    _zero_rows(env, zero_bytes)
    cuda.syncthreads()  # every thread has read _done_[env] before it is cleared
    if cuda.threadIdx.x == 0:
        _timestep_[env] = 0
        _done_[env] = 0
