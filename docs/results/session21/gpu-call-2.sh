#!/bin/bash
# Session 21, GPU call 2: (1) where the one-step step's time goes (benchmarks/one_step_kernel_ablation.py
# at 1M envs: as packaged, without the observation/mask writes, without the serial metrics, one env
# per block, and the step before session 21); (2) the published COVID-19 command's start-up, warm
# (startup_profile.py), and a warm cProfile with the callers of the hot built-ins; (3) in the
# background, issue 23's headline question (call 1's R and R2, their arguments now in order): do
# phase-2 agents trained against a random frozen planner condition their work on the rates?
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f
OUT=${OUT:-runs/session21_out}; mkdir -p $OUT
T=${T:-560}; start=$(date +%s)
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
python3 benchmarks/one_step_kernel_ablation.py --num_envs 1000000 --rounds 20 \
  --variants main no_writes no_metrics one_env_per_block old --old_source one_step_economy_step_63b0ee1.cu 2>&1 | tee $OUT/ablation.log
python3 benchmarks/startup_profile.py --device cuda --repeats 3 > $OUT/startup.log 2>&1; tail -16 $OUT/startup.log
python3 - > $OUT/cprofile.txt 2>&1 <<'PY'
import cProfile, pstats, time
t0 = time.perf_counter()
from ai_economist.training import training_script
prof = cProfile.Profile()
prof.enable()
rc = training_script.main(["--env", "covid_and_economy_environment", "--device", "cuda", "--results_dir", "runs/prof2", "--quiet"])
prof.disable()
print("rc", rc, "wall", round(time.perf_counter() - t0, 2))
st = pstats.Stats(prof); st.sort_stats("cumulative").print_stats(60); st.sort_stats("tottime").print_stats(30)
st.print_callers("_cuda_getDeviceCount|method 'cpu'|cudaMemGetInfo|graphs.py:137|create_dynamic|_register_to_dispatcher")
PY
head -3 $OUT/cprofile.txt
P1="--scenario gather-trade-build --seeds 0 --schedules ai-planner --phase1_steps 30000000 --device cuda --workers 1 --eval_episodes 8 --tax_annealing_fraction 0.3 --no_plot"
C1="trainer.num_envs=300 trainer.train_batch_size=60000 policy.a.lr=0.001"
P2="phase2:trainer.num_envs=1000 phase2:trainer.train_batch_size=200000 phase2:policy.a.num_mini_batches=16 phase2:policy.p.num_mini_batches=16"
probe() {  # agents-dir name
  timeout ${PROBE_T:-100} python3 -m ai_economist.simulate.cli --scenario gather-trade-build \
    --agents "checkpoint:$1" --policy free-market fixed:0.2 fixed:0.5 fixed:0.9 \
    --episodes 1 --sweep seed=0,1 --out $OUT/probe_$2 --no_plots --no_progress > $OUT/probe_$2.log 2>&1
  echo "probe $2 rc $?"
}
left=$((T - $(date +%s) + start - 110)); echo "protocols get $left s"
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/R $P1 --phase2_steps 100000000 \
   $C1 $P2 phase2:policy.p.to_train=false > $OUT/R.log 2>&1; echo "R rc $?";
 probe runs/R/phase2_ai-planner_seed0/train R) &
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/R2 $P1 --phase2_steps 120000000 \
   $C1 $P2 "phase2:policy.p.lr=[[0,1e-12],[72000000,1e-12],[72000001,0.0003]]" \
   "phase2:policy.p.entropy_coeff=[[0,2.0],[72000000,2.0],[120000000,0.125]]" > $OUT/R2.log 2>&1; echo "R2 rc $?";
 probe runs/R2/phase2_ai-planner_seed0/train R2; probe runs/R2/phase1_seed0/train phase1) &
wait
for f in $OUT/R.log $OUT/R2.log; do echo "== $f"; grep -E "done in|rc|error" $f | tail -4; done
for f in $OUT/probe_*.log; do echo "== $f"; tail -3 "$f"; done
mkdir -p $OUT/metrics; for r in R R2; do cp runs/$r/phase2_ai-planner_seed0/train/metrics.csv $OUT/metrics/$r-phase2.csv 2>/dev/null; done
date
