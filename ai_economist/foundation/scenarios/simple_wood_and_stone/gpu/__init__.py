"""Gather-trade-build's world as a GPU environment on the generic path (groundwork).

``GatherTradeBuildWorldGpu`` (:mod:`.env`) declares the state (:mod:`.state`), draws with a
counter-based RNG (:mod:`.rng`), steps in numpy (:mod:`.reference`, the truth) and in the CUDA C
(``kernels/gtb_world_step.cu``) and Numba (:mod:`.gtb_world_numba`) twins. Components so far:
Build and Gather (with the scenario's regrowth); the market and the tax plug in later
(``docs/gtb-gpu.md``). Not registered for training yet.
"""
