#!/bin/bash
# Session 21, GPU call 4: (1) the one-step step with one staging pass per kind of entry (the
# ablation and economy_env_throughput.py at 1M envs, both twins); (2) the published COVID-19
# command's start-up with Python's bytecode cached (this machine sets PYTHONDONTWRITEBYTECODE=1
# and its torch has no bytecode caches, so every process compiled 686 torch modules: call 3). One
# priming run writes them under PYTHONPYCACHEPREFIX (the install is not touched), then the profile
# reads them, as a pip-installed torch would; (3) the one-step GPU tests.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
OUT=${OUT:-runs/session21_out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
python3 benchmarks/one_step_kernel_ablation.py --num_envs 1000000 --rounds 20 --variants main no_writes 2>&1 | tee $OUT/ablation.log
python3 benchmarks/economy_env_throughput.py --backends pycuda numba --num_envs 100000 1000000 --steps 200 2>&1 | tee $OUT/one_step_speed.log
export PYTHONPYCACHEPREFIX=/tmp/pycache
env -u PYTHONDONTWRITEBYTECODE python3 -m ai_economist.training.training_script --env covid_and_economy_environment \
  --device cuda --results_dir runs/prime --quiet > /dev/null 2>&1; echo "priming rc $?"; du -sh /tmp/pycache
python3 benchmarks/startup_profile.py --device cuda --repeats 5 > $OUT/startup.log 2>&1; tail -17 $OUT/startup.log
python3 benchmarks/startup_profile.py --device cuda --cold --repeats 1 > $OUT/startup_cold.log 2>&1; tail -17 $OUT/startup_cold.log | head -3
unset PYTHONPYCACHEPREFIX
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfEs -n 6 \
  tests/foundation/scenarios/one_step_economy > $OUT/gpu_one_step.log 2>&1; echo "one-step gpu tests rc $?"; tail -3 $OUT/gpu_one_step.log
date
