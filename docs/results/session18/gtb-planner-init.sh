#!/bin/bash
# Session 18, GPU call 1: does a planner that starts at low rates learn a schedule that beats
# the free market and Saez? Seed 0, 30M + 30M env-steps at 300 envs (session 16's size),
# session 16's H3 planner settings, side by side:
#   L1  the planner's initial policy favours low rates (initial_logits: NO-OP 0, rate k*0.05
#       at -0.25k: mean initial rate about 0.16), entropy 0.05 throughout
#   L2  L1 with entropy 0.01
#   L3  L1 with a per-period planner (gamma 0.98, GAE lambda 0.9)
#   B   flat fixed schedules with the agents re-trained under them (free market, 0.1, 0.2, 0.3):
#       where the flat-tax frontier lies on this seed
# then a probe of L1's phase-2 agents (not retrained) under fixed schedules: do they work less
# when the rates they observe are higher?
# Run from the repository root on the GPU machine; $OUT is where logs go. Scale with
# DEV=cpu P1=... P2=... ENVS=... BATCH=... EVAL=... for a local dry run.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
set -f  # from here the overrides hold [ ] (no globbing)
OUT=${OUT:-runs/session18_out}; mkdir -p $OUT
DEV=${DEV:-cuda}; P1=${P1:-30000000}; P2=${P2:-30000000}; ENVS=${ENVS:-300}; BATCH=${BATCH:-60000}
EVAL=${EVAL:-8}; T=${T:-500}; EXTRA=${EXTRA:-}
FREEZE=$((P2 * 3 / 10)); OPEN=$((P2 / 3))
COMMON="--scenario gather-trade-build --seeds 0 --phase1_steps $P1 --phase2_steps $P2 --device $DEV --workers 4 --eval_episodes $EVAL --tax_annealing_fraction 0.3 --no_plot trainer.num_envs=$ENVS trainer.train_batch_size=$BATCH policy.a.lr=0.001 $EXTRA"
H3="phase2:policy.p.lr=[[0,0.000001],[$FREEZE,0.000001],[$OPEN,0.0003]] phase2:policy.a.entropy_coeff=[[0,0.1],[$P2,0.025]] phase2:policy.p.normalize_value=true phase2:policy.p.num_epochs=4"
LOW="phase2:policy.p.model.initial_logits=[0,0,-0.25,-0.5,-0.75,-1,-1.25,-1.5,-1.75,-2,-2.25,-2.5,-2.75,-3,-3.25,-3.5,-3.75,-4,-4.25,-4.5,-4.75,-5]"
run() { name=$1; shift; timeout -s TERM $T python3 -m ai_economist.training.tax_protocol --results_dir runs/$name "$@" > $OUT/$name.log 2>&1; echo "$name rc $?" >> $OUT/$name.log; }
run L1 --schedules ai-planner $COMMON $H3 $LOW phase2:policy.p.entropy_coeff=0.05 phase2:policy.p.gamma=1.0 phase2:policy.p.gae_lambda=1.0 &
run L2 --schedules ai-planner $COMMON $H3 $LOW phase2:policy.p.entropy_coeff=0.01 phase2:policy.p.gamma=1.0 phase2:policy.p.gae_lambda=1.0 &
run L3 --schedules ai-planner $COMMON $H3 $LOW phase2:policy.p.entropy_coeff=0.05 phase2:policy.p.gamma=0.98 phase2:policy.p.gae_lambda=0.9 &
run B --schedules free-market fixed:0.1 fixed:0.2 fixed:0.3 $COMMON &
wait
for n in L1 L2 L3 B; do echo "== $n"; grep -E "done in|rc " $OUT/$n.log | tail -6; done
echo "== probe: L1's phase-2 agents (not retrained) under fixed schedules"
timeout ${PROBE_T:-80} python3 -m ai_economist.simulate.cli --scenario gather-trade-build --agents checkpoint:runs/L1/phase2_ai-planner_seed0/train --policy free-market fixed:0.1 fixed:0.3 fixed:0.6 fixed:0.9 --episodes 2 --workers 5 --out $OUT/probe --no_plots --no_progress 2>&1 | tail -8
tar czf $OUT/metrics.tgz $(find runs/L1 runs/L2 runs/L3 runs/B -name metrics.csv -o -name results.csv -o -name result.json | sort -u) 2>/dev/null
date
