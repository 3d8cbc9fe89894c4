#!/bin/bash
# Session 22, GPU call 2: (1) the one-step economy with shared reset snapshots (every env starts
# alike, so each snapshot is one row: the reset writes the done envs' rows and reads one row):
# the ablation (packaged step, and launch bounds asking for 3-6 blocks per SM: 80-40 registers) and
# economy_env_throughput.py at 100k / 1M envs, both twins; (2) then issue 23's headline with the
# random planner's rates over a low range first (--tax_annealing_fraction 9: the limit ends at 20%;
# 3: at 40%), the planner frozen for the first half of phase 2, then learning (session 21's R3
# settings), with Saez and the free market re-trained on the same budget (protocol P), and the
# agents probed at low flat rates afterwards.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session22_out}; mkdir -p $OUT
T=${T:-565}; start=$(date +%s)
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
python3 benchmarks/one_step_kernel_ablation.py --num_envs 1000000 --rounds 20 --variants main lb3 lb4 lb5 lb6 2>&1 | tee $OUT/ablation.log
python3 benchmarks/economy_env_throughput.py --backends pycuda numba --num_envs 100000 1000000 --steps 200 2>&1 | tee $OUT/one_step_speed.log
P1="--scenario gather-trade-build --seeds 0 --phase1_steps 30000000 --phase2_steps 90000000 --device cuda --eval_episodes 8 --no_plot"
C1="trainer.num_envs=300 trainer.train_batch_size=60000 policy.a.lr=0.001"
P2="phase2:trainer.num_envs=1000 phase2:trainer.train_batch_size=200000 phase2:policy.a.num_mini_batches=16 phase2:policy.p.num_mini_batches=16"
PL="phase2:policy.p.lr=[[0,1e-12],[45000000,1e-12],[45000001,0.001]] phase2:policy.p.entropy_coeff=0.01"
probe() {  # agents-dir name
  timeout ${PROBE_T:-60} python3 -m ai_economist.simulate.cli --scenario gather-trade-build \
    --agents "checkpoint:$1" --policy free-market fixed:0.1 fixed:0.2 fixed:0.4 \
    --episodes 1 --sweep seed=0,1 --out $OUT/probe_$2 --no_plots --no_progress > $OUT/probe_$2.log 2>&1
  echo "probe $2 rc $?"
}
left=$((T - $(date +%s) + start - 75)); echo "protocols get $left s"
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/P $P1 \
   --schedules ai-planner saez free-market --workers 3 --tax_annealing_fraction 9 $C1 $P2 $PL > $OUT/P.log 2>&1; echo "P rc $?";
 probe runs/P/phase2_ai-planner_seed0/train P9) &
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/Q $P1 \
   --schedules ai-planner --workers 1 --tax_annealing_fraction 3 $C1 $P2 $PL > $OUT/Q.log 2>&1; echo "Q rc $?";
 probe runs/Q/phase2_ai-planner_seed0/train Q3) &
wait
for f in $OUT/P.log $OUT/Q.log; do echo "== $f"; grep -E "done in|error|Error" $f | tail -6; done
for f in $OUT/probe_*.log; do echo "== $f"; tail -3 "$f"; done
mkdir -p /tmp/metrics; for r in P Q; do cp runs/$r/results.csv /tmp/metrics/$r-results.csv 2>/dev/null;
  cp runs/$r/phase2_ai-planner_seed0/train/metrics.csv /tmp/metrics/$r-ai-phase2.csv 2>/dev/null; done
cp $OUT/probe_*/*.csv /tmp/metrics/ 2>/dev/null; tar czf $OUT/metrics.tgz -C /tmp metrics
date
