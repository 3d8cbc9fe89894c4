#!/bin/bash
# GTB planner diagnostics planned for session 17 (not run: the device budget was spent).
# Run from the repository root on the GPU machine; $OUT is where logs go.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f  # from here the overrides hold [ ] (no globbing)
OUT=${OUT:-runs/diag_out}; mkdir -p $OUT
COMMON="--scenario gather-trade-build --seeds 0 --schedules ai-planner --phase1_steps 30000000 --phase2_steps 30000000 --device cuda --workers 5 --eval_episodes 8 trainer.num_envs=300 trainer.train_batch_size=60000 policy.a.lr=0.001"
H3="phase2:policy.p.lr=[[0,0.000001],[9000000,0.000001],[10000000,0.0003]] phase2:policy.p.entropy_coeff=[[0,0.5],[30000000,0.05]] phase2:policy.a.entropy_coeff=[[0,0.1],[30000000,0.025]] phase2:policy.p.normalize_value=true phase2:policy.p.num_epochs=4"
run() { name=$1; shift; timeout -s TERM ${T:-300} python3 -m ai_economist.training.tax_protocol --results_dir runs/$name "$@" > $OUT/$name.log 2>&1; echo "$name rc $?" >> $OUT/$name.log; }
# F0: the agents frozen in phase 2 (a stationary economy): does the planner's entropy fall at all?
run F0 --tax_annealing_fraction 0.3 $COMMON $H3 phase2:policy.a.to_train=false phase2:policy.p.gamma=1.0 phase2:policy.p.gae_lambda=1.0 &
# M1: a per-period (myopic) planner: gamma 0.98, lambda 0.9
run M1 --tax_annealing_fraction 0.3 $COMMON $H3 phase2:policy.p.gamma=0.98 phase2:policy.p.gae_lambda=0.9 &
wait
for n in F0 M1; do echo "== $n"; tail -7 $OUT/$n.log; done
echo "== probe: trained agents (not retrained) under fixed schedules"
for run in runs/M1/phase2_ai-planner_seed0/train runs/M1/phase1_seed0/train runs/F0/phase2_ai-planner_seed0/train; do
  echo "-- agents of $run"
  timeout 90 python3 -m ai_economist.simulate.cli --scenario gather-trade-build --agents checkpoint:$run --policy free-market fixed:0.3 fixed:0.6 fixed:0.9 saez --episodes 2 --workers 5 --out $OUT/probe_$(echo $run | tr / _) --no_plots --no_progress 2>&1 | tail -7
done
tar czf $OUT/diag.tgz $(find runs -name metrics.csv -o -name results.csv | grep -v phase1 | sort -u) 2>/dev/null
date
