#!/bin/bash
# Session 23, GPU call 1: the whole `pytest -m gpu` at the newest tree (alone). New since the
# suite last passed whole (6542dd3, session 20): session 21's one-step kernels and session 22's
# shared reset snapshots (`CUDADataManager.snapshot` is one row for arrays pushed with
# `replicate_over_envs`). `-v` names every result in the log even if the limit cuts the summary.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
OUT=${OUT:-runs/session23_out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
git log -1 --format=%h 2>/dev/null
timeout ${T:-545} python3 -m pytest -m gpu -v -p no:cacheprovider -p no:benchmark -rfEs -n 15 --dist load \
  --durations=15 --junitxml=$OUT/junit.xml tests > $OUT/gpu.log 2>&1; echo "gpu suite rc $?"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/gpu.log | grep "::" | sed -E 's/^\[gw[0-9]+\] \[ *[0-9]+%\] //' | awk '{print $1}' | sort | uniq -c
grep -E "FAILED|ERROR" $OUT/gpu.log | grep "::" | head -20
tail -25 $OUT/gpu.log
date
