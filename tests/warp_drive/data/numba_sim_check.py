"""Runs tiny_numba_kernels through NumbaFunctionManager in Numba's CUDA simulator.

Used by test_function_manager.py, in-process when NUMBA_ENABLE_CUDASIM=1 is already set,
otherwise in a subprocess (the simulator must be chosen before numba is imported).
"""

import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def run() -> None:
    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1 first"
    from ai_economist.warp_drive.data_manager import CUDADataManager
    from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset
    from ai_economist.warp_drive.function_manager import NumbaFunctionManager
    from ai_economist.warp_drive.state import StateField, StateSpec

    num_envs, num_agents, episode_length = 3, 4, 2
    spec = StateSpec(
        [
            StateField("state", np.float32, ("num_agents",)),
            StateField("weights", np.float32, ("num_agents",), per_env=False),
            StateField("scale", np.float32, (), per_env=False),
            StateField("_done_", np.int32, ()),
            StateField("_timestep_", np.int32, ()),
            StateField("episode_length", np.int32, (), per_env=False),
        ]
    ).resolve({"num_agents": num_agents})
    dm = CUDADataManager(num_agents, episode_length, num_envs, device="cpu")
    init = np.arange(num_agents, dtype=np.float32)
    weights = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    spec.allocate(
        dm, {"state": init, "weights": weights, "scale": 0.5, "episode_length": episode_length}
    )
    fm = NumbaFunctionManager(num_agents, num_envs)
    fm.load_module(str(HERE / "tiny_numba_kernels.py"))
    fm.initialize_functions(["tiny_step"])
    args = spec.kernel_args(dm, backend="numba")
    assert isinstance(args[0], np.ndarray)  # simulator: numpy view of the CPU tensor
    fm.launch("tiny_step", *args)
    step = fm.bind("tiny_step", *args)
    step()
    state = dm.pull_data_from_device("state")
    np.testing.assert_allclose(state, np.broadcast_to(init + 2 * 0.5 * weights, (num_envs, 4)))
    assert dm.pull_data_from_device("_done_").tolist() == [1, 1, 1]
    assert dm.pull_data_from_device("_timestep_").tolist() == [2, 2, 2]
    # the torch tensor is the same memory the kernel wrote
    assert dm.data_on_device_via_torch("state").numpy()[0, 3] == init[3] + weights[3]

    dm.data_on_device_via_torch("_done_")[1] = 0
    CUDAEnvironmentReset(dm).reset_when_done(mode="if_done")
    state = dm.pull_data_from_device("state")
    np.testing.assert_array_equal(state[0], init)
    np.testing.assert_array_equal(state[2], init)
    np.testing.assert_allclose(state[1], init + weights)
    assert dm.pull_data_from_device("_timestep_").tolist() == [0, 2, 0]
    print("NUMBA_SIM_OK")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[2]))
    run()
