#!/bin/bash
# Session 20, GPU call 4: call 1's probe again, now that the simulate commands act with one torch
# thread (`simulate.checkpoints.policy_inference`): seed 0, phase 1 then phase 2 under the AI planner
# and the progressive fixed schedule (30M + 30M at 300 envs), then the phase-1, progressive and
# AI-planner agents, not re-trained, under free market and flat 0.2 / 0.5 / 0.9.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session20_out}; mkdir -p $OUT
PA=fixed:0,0,0.1,0.2,0.3,0.4,0.5
timeout -s TERM 150 python3 -m ai_economist.training.tax_protocol --results_dir runs/C \
  --scenario gather-trade-build --seeds 0 --schedules ai-planner $PA \
  --phase1_steps 30000000 --phase2_steps 30000000 --device cuda --workers 4 --eval_episodes 8 \
  --tax_annealing_fraction 0.3 --no_plot trainer.num_envs=300 trainer.train_batch_size=60000 \
  policy.a.lr=0.001 "phase2:policy.p.entropy_coeff=[[0,2.0],[15000000,0.125]]" > $OUT/C.log 2>&1
echo "protocol rc $?"; grep -E "done in" $OUT/C.log
for agents in runs/C/phase1_seed0/train "runs/C/phase2_fixed-0_0_0.1_0.2_0.3_0.4_0.5_seed0/train" runs/C/phase2_ai-planner_seed0/train; do
  ls -d "$agents" > /dev/null || continue
  name=$(basename $(dirname "$agents"))
  (timeout ${PROBE_T:-150} python3 -m ai_economist.simulate.cli --scenario gather-trade-build \
    --agents "checkpoint:$agents" --policy free-market fixed:0.2 fixed:0.5 fixed:0.9 \
    --episodes 1 --sweep seed=0,1 --out $OUT/probe_$name --no_plots --no_progress > $OUT/probe_$name.log 2>&1; echo "probe $name rc $?") &
done
wait
for f in $OUT/probe_*.log; do echo "== $f"; tail -7 "$f"; done
date
