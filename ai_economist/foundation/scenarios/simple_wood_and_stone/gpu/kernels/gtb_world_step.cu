// Gather-trade-build's world (CUDA C): the twin of gpu/reference.py (numpy, the truth) and of
// gpu/gtb_world_numba.py. gtb_world_reset re-initialises every env whose _timestep_ is 0
// (after the generic reset; idempotent); gtb_world_step advances every env one step. One
// block per env: threads 0..N_AGENTS-1 are the agents, thread N_AGENTS the planner; all
// threads share the loops over map cells. gather_trade_build_world_state.h is generated from
// the declaration (gpu/state.py): the sizes, indices and positions gtb_world.cuh needs and the
// kernel parameter list. The device functions are in gtb_world.cuh (shared with the world
// with the market, gtb_market_world_step.cu), the kernels in gtb_world_kernels.cuh.
#include "gather_trade_build_world_state.h"
#include "gtb_world.cuh"
#include "gtb_world_kernels.cuh"
