#!/bin/bash
# Session 22, GPU call 1: the whole `pytest -m gpu` at the newest tree (shared reset snapshots for
# replicated initial states are new: warp_drive/data_manager.py, fused_reset.py and its kernels),
# alone; `-v` names every result in the log even if the limit cuts the summary.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
OUT=${OUT:-runs/session22_out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
timeout ${T:-550} python3 -m pytest -m gpu -v -p no:cacheprovider -p no:benchmark -rfEs -n 15 --dist load \
  --junitxml=$OUT/junit.xml tests > $OUT/gpu.log 2>&1; echo "gpu suite rc $?"
grep -cE " PASSED" $OUT/gpu.log; grep -E " FAILED| ERROR" $OUT/gpu.log | head -20; tail -4 $OUT/gpu.log
date
