#!/bin/bash
# Session 23, GPU call 2 (session 22's plan, phase 2 shortened to 60M so that call 3 can add seeds
# within the session's device time): (1) the one-step economy's launch-bound ablation (the packaged
# step and bounds for 3-6 blocks per SM) and, on an H200 only (the 1e8 target's card), its
# env-only speed; (2) issue 23's headline with the random planner's rates over a low range
# (--tax_annealing_fraction 9: the limit ends at 20%, P; 3: at 40%, Q), the planner frozen for
# the first half of phase 2 and then learning, with Saez (both) and the free market (P) re-trained
# on the same budget, and the agents probed at low flat rates afterwards.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session23_out}; mkdir -p $OUT/logs
T=${T:-565}; start=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
timeout 75 python3 benchmarks/one_step_kernel_ablation.py --num_envs 1000000 --rounds 10 --variants main lb3 lb4 lb5 lb6 2>&1 | tee $OUT/logs/ablation.log | tail -8
case "$gpu" in *H200*) timeout 60 python3 benchmarks/economy_env_throughput.py --backends pycuda --num_envs 1000000 --steps 200 2>&1 | tee $OUT/logs/one_step_speed.log | tail -3;; esac
P1="--scenario gather-trade-build --seeds 0 --phase1_steps 30000000 --phase2_steps ${P2STEPS:-60000000} --device cuda --eval_episodes 8 --no_plot"
C1="trainer.num_envs=300 trainer.train_batch_size=60000 policy.a.lr=0.001"
P2="phase2:trainer.num_envs=1000 phase2:trainer.train_batch_size=200000 phase2:policy.a.num_mini_batches=16 phase2:policy.p.num_mini_batches=16"
SPLIT=${SPLIT:-30000000}
PL="phase2:policy.p.lr=[[0,1e-12],[$SPLIT,1e-12],[$((SPLIT + 1)),0.001]] phase2:policy.p.entropy_coeff=0.01"
probe() {  # agents-dir name
  timeout ${PROBE_T:-60} python3 -m ai_economist.simulate.cli --scenario gather-trade-build \
    --agents "checkpoint:$1" --policy free-market fixed:0.1 fixed:0.2 fixed:0.4 \
    --episodes 1 --sweep seed=0,1 --out $OUT/logs/probe_$2 --no_plots --no_progress > $OUT/logs/probe_$2.log 2>&1
  echo "probe $2 rc $?"
}
left=$((T - $(date +%s) + start - 75)); echo "protocols get $left s"
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/P $P1 \
   --schedules ai-planner saez free-market --workers 3 --tax_annealing_fraction 9 $C1 $P2 $PL > $OUT/logs/P.log 2>&1; echo "P rc $?";
 probe runs/P/phase2_ai-planner_seed0/train P9) &
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/Q $P1 \
   --schedules ai-planner saez --workers 2 --tax_annealing_fraction 3 $C1 $P2 $PL > $OUT/logs/Q.log 2>&1; echo "Q rc $?";
 probe runs/Q/phase2_ai-planner_seed0/train Q3) &
wait
for f in $OUT/logs/P.log $OUT/logs/Q.log; do echo "== $f"; grep -E "done in|error|Error" $f | tail -6; done
for f in $OUT/logs/probe_*.log; do echo "== $f"; tail -3 "$f"; done
for r in P Q; do cp runs/$r/results.csv $OUT/logs/$r-results.csv 2>/dev/null; cat runs/$r/results.csv 2>/dev/null;
  cp runs/$r/phase2_ai-planner_seed0/train/metrics.csv $OUT/logs/$r-ai-phase2-metrics.csv 2>/dev/null; done
cp $OUT/logs/probe_*/*.csv $OUT/logs/ 2>/dev/null
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
date
