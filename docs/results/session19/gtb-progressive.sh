#!/bin/bash
# Session 19, GPU call C: is there a fixed schedule above the free market and 1.16x Saez on
# gather-trade-build (issue 23's headline asks the AI planner for both)? Progressive and low
# flat schedules with the agents re-trained under each, seeds 0 1 2, 30M + 30M env-steps at
# 300 envs (session 15's protocol settings, whose Saez / US federal / free-market rows on the
# same seeds are h200-2026-12-02-session15-gtb-protocol.csv: free market reproduced to the
# digit in session 18), then a probe: phase-1 and P1 agents (not retrained) under flat taxes
# (do trained agents work less when the rates they observe are higher?).
# Run from the repository root on the GPU machine; scale with DEV=cpu P1=... etc. for a dry run.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session19_out}; mkdir -p $OUT
DEV=${DEV:-cuda}; P1=${P1:-30000000}; P2=${P2:-30000000}; ENVS=${ENVS:-300}; BATCH=${BATCH:-60000}
EVAL=${EVAL:-8}; T=${T:-430}; SEEDS=${SEEDS:-0 1 2}; WORKERS=${WORKERS:-12}
PA=fixed:0,0,0.1,0.2,0.3,0.4,0.5
PB=fixed:0,0,0,0.2,0.4,0.6,0.8
timeout -s TERM $T python3 -m ai_economist.training.tax_protocol --results_dir runs/C \
  --scenario gather-trade-build --seeds $SEEDS --schedules $PA $PB fixed:0.05 \
  --phase1_steps $P1 --phase2_steps $P2 --device $DEV --workers $WORKERS --eval_episodes $EVAL \
  --tax_annealing_fraction 0.3 --no_plot trainer.num_envs=$ENVS trainer.train_batch_size=$BATCH \
  policy.a.lr=0.001 > $OUT/C.log 2>&1
echo "protocol rc $?"; grep -vE "^\s*$" $OUT/C.log | tail -25
for agents in runs/C/phase1_seed0/train "runs/C/phase2_fixed-0_0_0.1_0.2_0.3_0.4_0.5_seed0/train"; do
  echo "== probe: $agents"
  ls -d "$agents" > /dev/null || continue
  timeout ${PROBE_T:-75} python3 -m ai_economist.simulate.cli --scenario gather-trade-build \
    --agents "checkpoint:$agents" --policy free-market fixed:0.2 fixed:0.5 fixed:0.9 \
    --episodes 2 --workers 4 --out $OUT/probe_$(basename $(dirname $agents)) --no_plots \
    --no_progress 2>&1 | tail -7
done
tar czf $OUT/metrics.tgz $(find runs/C -name metrics.csv -o -name results.csv -o -name result.json | sort -u) 2>/dev/null
date
