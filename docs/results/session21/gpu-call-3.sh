#!/bin/bash
# Session 21, GPU call 3: (1) the one-step step with staged observation entries (commit 220712e):
# the ablation and economy_env_throughput.py at 100k / 1M envs, both twins; (2) the published COVID-19
# command's start-up with bytecode caches written first (call 2's profile: 1,077 modules compiled
# from source in every process, 2.4 s: the preamble's `pip --no-compile` and the working-tree copy);
# (3) the one-step GPU tests; (4) in the background, issue 23's headline: the AI planner learning after
# 40M phase-2 steps against a random frozen planner (call 2: such agents condition their work on the
# rates), two planner settings.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
python3 -c "import sys, os; print('dont_write_bytecode', sys.flags.dont_write_bytecode, os.environ.get('PYTHONDONTWRITEBYTECODE'), sys.pycache_prefix)"
python3 -m compileall -q -j 8 ai_economist benchmarks /tmp/site > /dev/null; echo "compileall rc $?"
set -f
OUT=${OUT:-runs/session21_out}; mkdir -p $OUT
T=${T:-560}; start=$(date +%s)
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader
python3 benchmarks/one_step_kernel_ablation.py --num_envs 1000000 --rounds 20 --variants main no_writes 2>&1 | tee $OUT/ablation.log
python3 benchmarks/economy_env_throughput.py --backends pycuda numba --num_envs 100000 1000000 --steps 200 2>&1 | tee $OUT/one_step_speed.log
python3 benchmarks/startup_profile.py --device cuda --repeats 3 > $OUT/startup.log 2>&1; tail -17 $OUT/startup.log
python3 - > $OUT/cprofile.txt 2>&1 <<'PY'
import cProfile, pstats, time
t0 = time.perf_counter()
from ai_economist.training import training_script
prof = cProfile.Profile()
prof.enable()
rc = training_script.main(["--env", "covid_and_economy_environment", "--device", "cuda", "--results_dir", "runs/prof3", "--quiet"])
prof.disable()
print("rc", rc, "wall", round(time.perf_counter() - t0, 2))
st = pstats.Stats(prof); st.sort_stats("tottime").print_stats(25)
st.print_callers("cuda/__init__.py.*is_available|_register_to_dispatcher|custom_ops.py:189")
PY
head -3 $OUT/cprofile.txt
P1="--scenario gather-trade-build --seeds 0 --schedules ai-planner --phase1_steps 30000000 --device cuda --workers 1 --eval_episodes 8 --tax_annealing_fraction 0.3 --no_plot"
C1="trainer.num_envs=300 trainer.train_batch_size=60000 policy.a.lr=0.001"
P2="phase2:trainer.num_envs=1000 phase2:trainer.train_batch_size=200000 phase2:policy.a.num_mini_batches=16 phase2:policy.p.num_mini_batches=16"
left=$((T - $(date +%s) + start - 20)); echo "protocols get $left s"
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/R3 $P1 --phase2_steps 120000000 \
   $C1 $P2 "phase2:policy.p.lr=[[0,1e-12],[40000000,1e-12],[40000001,0.001]]" "phase2:policy.p.entropy_coeff=0.01" > $OUT/R3.log 2>&1; echo "R3 rc $?") &
(timeout -s TERM $left python3 -m ai_economist.training.tax_protocol --results_dir runs/R4 $P1 --phase2_steps 120000000 \
   $C1 $P2 "phase2:policy.p.lr=[[0,1e-12],[40000000,1e-12],[40000001,0.0003]]" "phase2:policy.p.entropy_coeff=0.05" > $OUT/R4.log 2>&1; echo "R4 rc $?") &
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfEs -n 6 \
  tests/foundation/scenarios/one_step_economy > $OUT/gpu_one_step.log 2>&1; echo "one-step gpu tests rc $?"; tail -3 $OUT/gpu_one_step.log
wait
for f in $OUT/R3.log $OUT/R4.log; do echo "== $f"; grep -E "done in|error" $f | tail -3; done
mkdir -p /tmp/metrics; for r in R3 R4; do cp runs/$r/phase2_ai-planner_seed0/train/metrics.csv /tmp/metrics/$r-phase2.csv 2>/dev/null; cp runs/$r/results.csv /tmp/metrics/$r-results.csv 2>/dev/null; done
tar czf $OUT/metrics.tgz -C /tmp metrics
date
