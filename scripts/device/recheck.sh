#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: one call that re-checks fixes on the GPU with one build.
# Builds `kiln` and the engine tests once (build-device: CUDA and torch) while the given zoo models export, then
# at the same time: the zoo on those models (bench/zoo/zoo.py, --redo), the CUDA layer suite and the
# cuda backend-conformance sweep (scripts/device/gpu_tests.sh), and a verbose timed cuda compile of
# $RECHECK_COMPILE (default maxvit_t) with KILN_LOG_TIME=1. A short table is printed last.
#   bash scripts/device/recheck.sh maxvit_t efficientnet_v2_s resnet50 --targets cpu,cuda,cuda-fp16
# $OUT gets the zoo results and table, the sweep log, the summary and logs.tgz (every log, the verbose compile's
# too), also when the call is cut short.
# RECHECK_ZOO_TIME: seconds the zoo may run after the build (default 330).
set -uo pipefail
final=${OUT:-/tmp/kiln-recheck-out}
out=/tmp/kiln-recheck-logs  # everything lands here; $OUT gets the results and one archive of the logs (8 files)
mkdir -p "$out" "$final"
trap 'cp "$out"/zoo_results.jsonl "$out"/zoo_table.md "$out"/sweep.log "$out"/gpu_summary.txt \
  "$out"/sweep_conv_debug.log "$final"/ 2>/dev/null;
  tar czf "$final"/logs.tgz -C "$out" . 2>/dev/null' EXIT
trap 'exit 143' TERM INT
export PYTHONUNBUFFERED=1
work=/tmp/kiln-zoo
results="$out/zoo_results.jsonl"
zoo=(python3 bench/zoo/zoo.py --kiln build-device/tools/kiln/kiln --work "$work" --results "$results")
"${zoo[@]}" --export-only "$@" >"$out/zoo_export.log" 2>&1 &
exporter=$!
source scripts/device/cudnn_env.sh
start=$(date +%s)
KILN_TARGETS="kiln kiln_engine_tests" scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON "${cudnn_cmake_args[@]}" \
  >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; tail -5 "$out/build.log"; exit 2; }
echo "build: $(($(date +%s) - start)) s"
wait $exporter
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
"${zoo[@]}" --redo --iters 10 --jobs 4 --compile-timeout 90 --run-timeout 60 --table "$out/zoo_table.md" \
  --deadline "${RECHECK_ZOO_TIME:-330}" "$@" >"$out/zoo_run.log" 2>&1 &
zoo_pid=$!
model=${RECHECK_COMPILE:-maxvit_t}
if [ -f "$work/$model/model.pt2" ]; then
  (time KILN_LOG_TIME=1 timeout 150 build-device/tools/kiln/kiln -v compile "$work/$model/model.pt2" \
    -o /tmp/recheck.kiln --backend cuda) >"$out/compile_$model.log" 2>&1 &
fi
OUT="$out" KILN_SKIP_BUILD=1 GPU_TESTS_BUILD=build-device GPU_TESTS_CPU=0 bash scripts/device/gpu_tests.sh \
  >"$out/gpu_summary.txt" 2>&1
wait
# Where the sweep failed on a convolution: its nonfinite cases again with the cuDNN algorithm choices logged.
if grep -q "convolution/nonfinite.*differ" "$out/sweep.log"; then
  KILN_TEST_BACKEND=cuda KILN_LOG_LEVEL=debug KILN_SWEEP_KIND=convolution KILN_SWEEP_CASE=nonfinite \
    timeout 60 build-device/tests/kiln_engine_tests --gtest_filter='BackendSweep.*' 2>&1 |
    grep -E "cuDNN|algorithm|differ" | cut -c1-250 | head -60 >"$out/sweep_conv_debug.log"
fi
head -4 "$out/gpu_summary.txt"
grep -c '^\[       OK' "$out/gpu_tests.log" | sed 's/^/cuda suite tests ok: /'
grep -E '^\[  FAILED' "$out/gpu_tests.log" | sort -u | head
echo "---- $model cuda compile: $(grep real "$out/compile_$model.log") ($(tail -3 "$out/compile_$model.log" | head -1 | cut -c1-160))"
grep -E "dropped|search stopped" "$out/compile_$model.log" | head -5
echo "---- zoo"
grep -vE "Warning|return cls|^export" "$out/zoo_run.log" | tail -60
