"""The Numba twin of ``kernels/reset_done_envs.cu``: reset every done environment in one launch.

Arrays come as tuples of int32 ``(num_envs, words)`` views (see ``fused_reset``): ``live`` with
their ``snapshot`` rows (a ``(1, words)`` view where every env shares one row), ``zero`` to be zeroed; the ``*_bytes`` tuples hold uint8
``(num_envs, bytes)`` views of arrays whose rows are not whole words. Block ``b`` owns envs
``[b * envs_per_block, (b + 1) * envs_per_block)``: launch with grid
``ceil(num_envs / envs_per_block)`` and at least ``envs_per_block`` threads.
"""

from __future__ import annotations

from ai_economist.warp_drive.errors import require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels


@cuda.jit(device=True)
def _restore_rows(first, envs, dsts, srcs, done):
    """The rows of the done envs among ``first .. first + envs - 1`` of every ``dsts[a]``
    copied from ``srcs[a]``, or from its one row if it has one (a shared snapshot); the
    block's threads stride the envs' units, coalesced."""
    for a in range(len(dsts)):
        dst, src = dsts[a], srcs[a]
        n = dst.shape[1]
        shared = src.shape[0] == 1
        for i in range(cuda.threadIdx.x, n * envs, cuda.blockDim.x):
            env = first + i // n
            if done[env] != 0:
                dst[env, i % n] = src[0 if shared else env, i % n]


@cuda.jit(device=True)
def _zero_rows(first, envs, dsts, done):
    """The rows of the done envs among ``first .. first + envs - 1`` of every ``dsts[a]`` set
    to 0 (the block's threads stride the envs' units)."""
    for a in range(len(dsts)):
        dst = dsts[a]
        n = dst.shape[1]
        for i in range(cuda.threadIdx.x, n * envs, cuda.blockDim.x):
            env = first + i // n
            if done[env] != 0:
                dst[env, i % n] = 0


@cuda.jit
def ResetDoneEnvs(
    live, snapshot, zero, live_bytes, snapshot_bytes, zero_bytes, envs_per_block, _done_, _timestep_
):
    """Block ``b``: if one of its envs is done, restore those envs' rows, zero the others,
    clear their time and done flags."""
    first = cuda.blockIdx.x * envs_per_block
    envs = min(envs_per_block, _done_.shape[0] - first)
    tid = cuda.threadIdx.x
    mine = 0
    if tid < envs and _done_[first + tid] != 0:
        mine = 1
    if cuda.syncthreads_or(mine) == 0:  # the same for every thread of the block
        return
    _restore_rows(first, envs, live, snapshot, _done_)
    _zero_rows(first, envs, zero, _done_)
    _restore_rows(first, envs, live_bytes, snapshot_bytes, _done_)
    _zero_rows(first, envs, zero_bytes, _done_)
    cuda.syncthreads()  # every thread has read _done_ of the block's envs before it is cleared
    if mine == 1:
        _timestep_[first + tid] = 0
        _done_[first + tid] = 0
