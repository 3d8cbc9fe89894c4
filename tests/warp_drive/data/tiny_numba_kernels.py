"""A tiny numba kernel for the warp_drive runtime tests (mirrors tiny_kernel.cu)."""

from numba import cuda


@cuda.jit
def tiny_step(state, weights, scale, done, timestep, episode_length):
    env = cuda.blockIdx.x
    agent = cuda.threadIdx.x
    state[env, agent] += scale * weights[agent]
    cuda.syncthreads()
    if agent == 0:
        timestep[env] += 1
        if timestep[env] >= episode_length:
            done[env] = 1
