#!/bin/bash
# Session 20, GPU call 2 (tree of the fused-sampling CUDA C twin and the TensorBoard event
# writer): the published COVID-19 command's start-up (warm caches, then cold), the training
# speed with each twin of the fused sampling kernel at 60 and 1,200 envs, then the GPU tests
# of the second half of `pytest -m gpu` (tests/training, tests/warp_drive, tests/tutorials,
# tests/benchmarks) and the one-step economy's. Run from the repository root on the GPU machine.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
OUT=${OUT:-runs/session20_out}; mkdir -p $OUT
T=${T:-560}; start=$(date +%s)
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
python3 benchmarks/startup_profile.py --device cuda --repeats 5 > $OUT/startup.log 2>&1; tail -16 $OUT/startup.log
python3 -X importtime -m ai_economist.training.training_script --env covid_and_economy_environment \
  --device cuda --results_dir runs/imp > /dev/null 2> $OUT/importtime.txt
grep -cE "triton|tensorboard" $OUT/importtime.txt
python3 benchmarks/train_throughput.py --env covid_and_economy_environment --device cuda \
  --num_envs 60 1200 --cuda_graphs --fused_sampling cuda_c triton off --iterations 20 --warmup 3 2>&1 | tee $OUT/train_twins.log | grep -v "^$" | tail -9
left=$((T - $(date +%s) + start)); echo "tests get $left s"
timeout $left python3 -m pytest -m gpu -v -p no:cacheprovider -p no:benchmark -rfEs -n 15 --dist load --durations=15 --junitxml=$OUT/junit_2.xml tests/training tests/warp_drive tests/tutorials tests/benchmarks tests/foundation/scenarios/one_step_economy > $OUT/gpu_2.log 2>&1
echo "pytest rc $?"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/gpu_2.log | sed -E 's/^\[gw[0-9]+\] \[ *[0-9]+%\] //' | awk '{print $1}' | sort | uniq -c
grep -E "FAILED|ERROR" $OUT/gpu_2.log | grep "::" | head -10
tail -5 $OUT/gpu_2.log
python3 benchmarks/startup_profile.py --device cuda --cold --repeats 1 > $OUT/startup_cold.log 2>&1; tail -14 $OUT/startup_cold.log | head -3
date
