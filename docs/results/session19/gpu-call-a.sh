#!/bin/bash
# Session 19, GPU call A: speed figures on the idle machine first (the one-step economy's
# env-only speed with the new fused reset, the step and the reset timed alone; the published
# COVID-19 command's start-up), then the first half of `pytest -m gpu` (tests/foundation,
# tests/datasets, tests/example_envs). Run from the repository root on the GPU machine.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
OUT=${OUT:-runs/session19_out}; mkdir -p $OUT
T=${T:-540}; start=$(date +%s)
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
uptime
python3 benchmarks/economy_env_throughput.py --backends pycuda --num_envs 100000 1000000 --steps 200 2>&1 | tee $OUT/one_step_speed.log | grep -v "^$"
# call A also ran, with the step kernel's launch bounds of 49907f7 (reverted since, with the option):
#   python3 benchmarks/economy_env_throughput.py --backends pycuda --num_envs 1000000 --steps 200 --kernel_define STEP_MIN_BLOCKS=1 --kernel_define STEP_MAX_THREADS=1024
python3 benchmarks/economy_env_throughput.py --backends numba --num_envs 100000 --steps 200 2>&1 | tee $OUT/one_step_speed_numba.log | grep "numba\|alone"
python3 benchmarks/startup_profile.py --device cuda --repeats 3 > $OUT/startup.log 2>&1; tail -16 $OUT/startup.log
left=$((T - $(date +%s) + start)); echo "tests get $left s"
timeout $left python3 -m pytest -m gpu -v -p no:cacheprovider -p no:benchmark -rfEs -n 15 --dist load --durations=15 --junitxml=$OUT/junit_a.xml tests/foundation tests/datasets tests/example_envs > $OUT/gpu_a.log 2>&1
echo "pytest rc $?"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/gpu_a.log | sed -E 's/^\[gw[0-9]+\] \[ *[0-9]+%\] //' | awk '{print $1}' | sort | uniq -c
grep -E "FAILED|ERROR" $OUT/gpu_a.log | grep "::" | head -10
tail -22 $OUT/gpu_a.log
date
