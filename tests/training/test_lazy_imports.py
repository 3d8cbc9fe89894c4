"""The training command's start-up stays light (issue 25): importing the script loads none of the
heavy libraries, and building the published env's wrapper does not import gymnasium (its spaces
are built on first access). Each check runs in a fresh interpreter and reads ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Heavy libraries that ``import ai_economist.training.training_script`` must not load: the run
# imports torch when it starts training, and the others only where a feature needs them.
HEAVY = ("torch", "torch._dynamo", "sympy", "gymnasium", "tensorboard", "torch.utils.tensorboard",
         "numba", "pycuda", "triton", "ray", "lightning", "scipy", "pandas", "matplotlib")  # fmt: skip


def loaded_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints a JSON object as its last line."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_training_script_loads_no_heavy_library():
    loaded = loaded_after(
        f"""
        import json, sys
        import ai_economist.training.training_script
        print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))
        """
    )
    assert not [name for name, present in loaded.items() if present], loaded


def test_env_wrapper_builds_its_spaces_and_imports_gymnasium_on_first_access():
    loaded = loaded_after(
        """
        import json, sys
        from ai_economist import foundation
        from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
        from ai_economist.foundation.scenarios.covid19.configs import (
            TRAINING_ENV_CONFIG, env_config)

        env = foundation.make_env_instance(
            "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG, episode_length=5))
        wrapper = FoundationEnvWrapper(env, num_envs=1)
        obs = wrapper.reset_all_envs()
        before = "gymnasium" in sys.modules
        obs["0"].clear()  # the caller's copy: the spaces do not depend on it
        agent = wrapper.observation_space["0"]["world-agent_state"]
        print(json.dumps({
            "before": before, "after": "gymnasium" in sys.modules,
            "agents": sorted(wrapper.observation_space) == sorted(wrapper.action_space),
            "shape": list(agent.shape), "dtype": str(agent.dtype),
            "actions": [int(wrapper.action_space[k].n) for k in ("0", "p")],
            "same": wrapper.observation_space is wrapper.observation_space,
        }))
        """
    )
    assert loaded["before"] is False and loaded["after"] is True
    assert loaded["agents"] and loaded["same"]
    assert loaded["shape"] == [6] and loaded["dtype"] == "float32"
    assert loaded["actions"] == [11, 21]
