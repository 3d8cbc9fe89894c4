"""What building the COVID-19 env wrapper costs from a fresh process, and what it imports.

    python -X importtime benchmarks/wrapper_build_imports.py 2>imports.txt

Imports the Foundation, builds ``CovidAndEconomySimulation`` with the training config and
``FoundationEnvWrapper(env, num_envs=1)``, then prints the wall and CPU time of the build, whether
gymnasium was loaded and how many modules are (``-X importtime`` gives the per-module times).
"""

from __future__ import annotations

import sys
import time


def main() -> None:
    from ai_economist import foundation
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config

    wall, cpu = time.perf_counter(), time.process_time()
    env = foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG)
    )
    FoundationEnvWrapper(env, num_envs=1)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"wrapper build {wall:.3f} s wall {cpu:.3f} s CPU; gymnasium loaded "
        f"{'gymnasium' in sys.modules}; modules {len(sys.modules)}"
    )


if __name__ == "__main__":
    main()
