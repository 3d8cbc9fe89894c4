"""WarpDrive's example environments on the generic GPU path (one folder each).

Each folder holds a ``GpuEnvironment`` subclass with its numpy reference step, a CUDA C step
and a Numba step with the same kernel names and parameters.
"""
