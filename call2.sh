python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
T="python3 benchmarks/train_throughput.py --device cuda --cuda_graphs --compile_update --precision bf16"
( timeout 150 $T --acting_precision fp32 --warmup 5 --iterations 300 --num_envs 60 --update_graph on > $OUT/t60_on.txt 2>&1; echo "rc=$?" >> $OUT/t60_on.txt )
cat $OUT/t60_on.txt
( timeout 100 $T --acting_precision fp32 --warmup 5 --iterations 300 --num_envs 60 --update_graph off > $OUT/t60_off.txt 2>&1; echo "rc=$?" >> $OUT/t60_off.txt )
( timeout 100 $T --acting_precision bf16 --warmup 5 --iterations 300 --num_envs 60 --update_graph on > $OUT/t60_on_bf16act.txt 2>&1; echo "rc=$?" >> $OUT/t60_on_bf16act.txt )
( timeout 150 $T --acting_precision fp32 --warmup 3 --num_envs 1200 10000 --update_graph on > $OUT/tbig_on.txt 2>&1; echo "rc=$?" >> $OUT/tbig_on.txt )
( timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/warp_drive/training/test_rollout_graph_gpu.py -k "iteration" > $OUT/tests_iter.txt 2>&1; echo "rc=$?" >> $OUT/tests_iter.txt )
tail -5 $OUT/*.txt
