#!/bin/bash
# Session 22, GPU call 3 (a template, for when call 2 shows a recipe worth seeds): issue 23's
# headline over seeds 0-2 with the recipe of call 2 (F: the annealing fraction, SPLIT: the
# phase-2 step at which the planner starts learning), the AI planner, Saez and the free market
# re-trained on the same budget, 9 phase-2 runs on one GPU (--workers 9).
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session22_out}; mkdir -p $OUT
T=${T:-570}; F=${F:-9}; P2STEPS=${P2STEPS:-60000000}; SPLIT=${SPLIT:-30000000}
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
timeout -s TERM $((T - 30)) python3 -m ai_economist.training.tax_protocol --results_dir runs/S \
  --scenario gather-trade-build --seeds 0 1 2 --phase1_steps 30000000 --phase2_steps $P2STEPS \
  --device cuda --eval_episodes 8 --no_plot --schedules ai-planner saez free-market --workers 9 \
  --tax_annealing_fraction $F trainer.num_envs=300 trainer.train_batch_size=60000 policy.a.lr=0.001 \
  phase2:trainer.num_envs=1000 phase2:trainer.train_batch_size=200000 \
  phase2:policy.a.num_mini_batches=16 phase2:policy.p.num_mini_batches=16 \
  "phase2:policy.p.lr=[[0,1e-12],[$SPLIT,1e-12],[$((SPLIT + 1)),0.001]]" phase2:policy.p.entropy_coeff=0.01 \
  > $OUT/S.log 2>&1; echo "S rc $?"
grep -E "done in|error|Error|over that of|note:" $OUT/S.log | tail -20
cp runs/S/results.csv $OUT/S-results.csv 2>/dev/null
date
