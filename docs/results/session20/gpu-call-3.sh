#!/bin/bash
# Session 20, GPU call 3 (same tree as call 2 for the code): the first half of `pytest -m gpu`
# (tests/foundation, tests/datasets, tests/example_envs; with call 2's second half: the whole
# suite at this tree), then a cProfile of the published COVID-19 command (where its remaining
# start-up goes, by function). Run from the repository root on the GPU machine.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD:$PWD/.meta PYTHONUNBUFFERED=1
OUT=${OUT:-runs/session20_out}; mkdir -p $OUT
T=${T:-420}
timeout $T python3 -m pytest -m gpu -v -p no:cacheprovider -p no:benchmark -rfEs -n 15 --dist load --durations=10 --junitxml=$OUT/junit_3.xml tests/foundation tests/datasets tests/example_envs --deselect tests/foundation/scenarios/one_step_economy > $OUT/gpu_3.log 2>&1
echo "pytest rc $?"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/gpu_3.log | sed -E 's/^\[gw[0-9]+\] \[ *[0-9]+%\] //' | awk '{print $1}' | sort | uniq -c
grep -E "FAILED|ERROR" $OUT/gpu_3.log | grep "::" | head -10
tail -4 $OUT/gpu_3.log
python3 -m ai_economist.training.training_script --env covid_and_economy_environment --device cuda --results_dir runs/warm > /dev/null 2>&1
python3 -m cProfile -o $OUT/startup.prof -m ai_economist.training.training_script --env covid_and_economy_environment --device cuda --results_dir runs/prof > /dev/null 2>&1
python3 -c "import pstats; p = pstats.Stats('$OUT/startup.prof'); p.sort_stats('cumulative').print_stats(70)" > $OUT/startup_prof.txt 2>&1
python3 -c "import pstats; p = pstats.Stats('$OUT/startup.prof'); p.sort_stats('tottime').print_stats(30)" > $OUT/startup_prof_tottime.txt 2>&1
head -5 $OUT/startup_prof.txt | tail -2
date
