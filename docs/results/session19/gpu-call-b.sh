#!/bin/bash
# Session 19, GPU call B: the second half of `pytest -m gpu` (tests/training, tests/warp_drive,
# tests/tutorials, tests/benchmarks) at the same tree as call A. Run from the repository root.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
OUT=${OUT:-runs/session19_out}; mkdir -p $OUT
T=${T:-570}
timeout $T python3 -m pytest -m gpu -v -p no:cacheprovider -p no:benchmark -rfEs -n 15 --dist load --durations=15 --junitxml=$OUT/junit_b.xml tests/training tests/warp_drive tests/tutorials tests/benchmarks > $OUT/gpu_b.log 2>&1
echo "pytest rc $?"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/gpu_b.log | sed -E 's/^\[gw[0-9]+\] \[ *[0-9]+%\] //' | awk '{print $1}' | sort | uniq -c
grep -E "FAILED|ERROR" $OUT/gpu_b.log | grep "::" | head -10
tail -22 $OUT/gpu_b.log
date
