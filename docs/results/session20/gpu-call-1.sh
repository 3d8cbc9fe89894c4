#!/bin/bash
# Session 20, GPU call 1: (1) where the published COVID-19 command's import time goes on the
# device (python -X importtime, warm caches, second of two runs); (2) issue 23's question of
# why the AI planner drifts to high rates: seed 0, phase 1 then phase 2 under the AI planner and
# the progressive fixed schedule of session 19 (30M + 30M env-steps at 300 envs, session 15's
# protocol settings), then a probe: the phase-1, the progressive-schedule and the AI-planner
# agents, not re-trained, under free market and flat 0.2 / 0.5 / 0.9 (do trained agents work
# less when the rates they observe are higher? If not, the planner's gradient cannot see the
# productivity cost of a rate). Run from the repository root on the GPU machine.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session20_out}; mkdir -p $OUT
DEV=${DEV:-cuda}; P1=${P1:-30000000}; P2=${P2:-30000000}; T=${T:-330}; PROBE_T=${PROBE_T:-200}
for k in 1 2; do
  python3 -X importtime -m ai_economist.training.training_script --env covid_and_economy_environment \
    --device $DEV --results_dir runs/imp$k > /dev/null 2> $OUT/importtime.txt
done
grep "import time" $OUT/importtime.txt | awk -F'|' '{c=$3; n=match(c,/[^ ]/); gsub(/ /,"",$2); if (n<=6) print $2, c}' | sort -n -r | head -25
PA=fixed:0,0,0.1,0.2,0.3,0.4,0.5
timeout -s TERM $T python3 -m ai_economist.training.tax_protocol --results_dir runs/C \
  --scenario gather-trade-build --seeds 0 --schedules ai-planner $PA \
  --phase1_steps $P1 --phase2_steps $P2 --device $DEV --workers 4 --eval_episodes 8 \
  --tax_annealing_fraction 0.3 --no_plot trainer.num_envs=300 trainer.train_batch_size=60000 \
  policy.a.lr=0.001 "phase2:policy.p.entropy_coeff=[[0,2.0],[15000000,0.125]]" > $OUT/C.log 2>&1
echo "protocol rc $?"; grep -vE "^\s*$" $OUT/C.log | tail -12
for agents in runs/C/phase1_seed0/train "runs/C/phase2_fixed-0_0_0.1_0.2_0.3_0.4_0.5_seed0/train" runs/C/phase2_ai-planner_seed0/train; do
  ls -d "$agents" > /dev/null || continue
  name=$(basename $(dirname "$agents"))
  (timeout $PROBE_T python3 -m ai_economist.simulate.cli --scenario gather-trade-build \
    --agents "checkpoint:$agents" --policy free-market fixed:0.2 fixed:0.5 fixed:0.9 \
    --episodes 1 --workers 4 --out $OUT/probe_$name --no_plots --no_progress > $OUT/probe_$name.log 2>&1; echo "probe $name rc $?") &
done
wait
for f in $OUT/probe_*.log; do echo "== $f"; tail -8 $f; done
tar czf $OUT/metrics.tgz $(find runs/C -name metrics.csv -o -name results.csv -o -name result.json | sort -u) 2>/dev/null
date
