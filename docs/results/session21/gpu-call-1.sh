#!/bin/bash
# Session 21, GPU call 1: (1) the one-step economy's env-only speed with the step kernel's
# block-wide coalesced writes (issue 23: 1e8 env-steps/s), on the idle GPU; (2) in the background,
# issue 23's headline question: do agents trained in phase 2 against a random (frozen, uniform)
# planner learn to condition their work on the rates? Run R: 120M phase-2 env-steps against the
# frozen planner; run R2: the planner frozen for 90M, then learning for 60M; then a probe of
# each run's agents under free market and flat 0.2 / 0.5 / 0.9; (3) the one-step GPU tests;
# (4) cProfile of the published COVID-19 command (where its start-up goes, by function).
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session21_out}; mkdir -p $OUT
T=${T:-560}; start=$(date +%s)
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
python3 benchmarks/economy_env_throughput.py --backends pycuda numba --num_envs 100000 1000000 --steps 200 2>&1 | tee $OUT/one_step_speed.log
P1="--scenario gather-trade-build --seeds 0 --schedules ai-planner --phase1_steps 30000000 --device cuda --workers 1 --eval_episodes 8 --tax_annealing_fraction 0.3 --no_plot trainer.num_envs=300 trainer.train_batch_size=60000 policy.a.lr=0.001"
P2="phase2:trainer.num_envs=1000 phase2:trainer.train_batch_size=200000 phase2:policy.a.num_mini_batches=16 phase2:policy.p.num_mini_batches=16"
probe() {  # agents-dir name
  timeout ${PROBE_T:-120} python3 -m ai_economist.simulate.cli --scenario gather-trade-build \
    --agents "checkpoint:$1" --policy free-market fixed:0.2 fixed:0.5 fixed:0.9 \
    --episodes 1 --sweep seed=0,1 --out $OUT/probe_$2 --no_plots --no_progress > $OUT/probe_$2.log 2>&1
  echo "probe $2 rc $?"
}
left=$((T - $(date +%s) + start - 150))
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/R $P1 $P2 \
   --phase2_steps 120000000 phase2:policy.p.to_train=false > $OUT/R.log 2>&1; echo "R rc $?";
 probe runs/R/phase2_ai-planner_seed0/train R; probe runs/R/phase1_seed0/train R_phase1) &
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/R2 $P1 $P2 \
   --phase2_steps 150000000 "phase2:policy.p.lr=[[0,1e-12],[90000000,1e-12],[90000001,0.0003]]" \
   "phase2:policy.p.entropy_coeff=[[0,2.0],[90000000,2.0],[150000000,0.125]]" > $OUT/R2.log 2>&1; echo "R2 rc $?";
 probe runs/R2/phase2_ai-planner_seed0/train R2) &
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfEs -n 4 \
  tests/foundation/scenarios/one_step_economy > $OUT/gpu_one_step.log 2>&1; echo "one-step gpu tests rc $?"; tail -3 $OUT/gpu_one_step.log
python3 - > $OUT/cprofile.txt 2>&1 <<'PY'
import cProfile, pstats, time
t0 = time.perf_counter()
from ai_economist.training import training_script
prof = cProfile.Profile()
prof.enable()
rc = training_script.main(["--env", "covid_and_economy_environment", "--device", "cuda", "--results_dir", "runs/prof", "--quiet"])
prof.disable()
print("rc", rc, "wall", round(time.perf_counter() - t0, 2))
st = pstats.Stats(prof); st.sort_stats("cumulative").print_stats(45); st.sort_stats("tottime").print_stats(30)
PY
head -3 $OUT/cprofile.txt
wait
for f in $OUT/R.log $OUT/R2.log; do echo "== $f"; grep -E "done in|ai-planner   " $f | tail -4; done
for f in $OUT/probe_*.log; do echo "== $f"; tail -3 "$f"; done
mkdir -p $OUT/metrics; for r in R R2; do cp runs/$r/phase2_ai-planner_seed0/train/metrics.csv $OUT/metrics/$r-phase2.csv 2>/dev/null; done
date
