#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds Kiln with the CUDA backend against the installed torch's
# libtorch (scripts/device/build.sh), then runs on the GPU:
#   - gpu: `ctest -L gpu`, every test labeled gpu: the engine layer suite and the EngineCuda tests on cuda
#     (kiln_engine_gpu_tests), the converter harness on cuda, fp32 and the f16/bf16 cases
#     (kiln_conversion_gpu_tests), every bundled fixture compiled for cuda against torch's outputs and CUDA-graph
#     replay against plain execution (kiln_e2e_gpu_tests); then the torch_library tests (`ctest -L torch_library`),
#   - fixtures: every bundled fixture through the CLI, `kiln compile --backend cuda` and `kiln run --compare`
#     (max abs <= 1e-3 at fp32), one table row per fixture,
# and prints one summary table last. Logs go to $OUT (or /tmp/kiln-gpu-check).
# KILN_GPU_CHECK_STEPS (default "build gpu fixtures") picks steps; the build directory is build-device and is
# reused when present.
set -uo pipefail
out=${OUT:-/tmp/kiln-gpu-check}
mkdir -p "$out"
steps=${KILN_GPU_CHECK_STEPS:-build gpu fixtures}
build_dir=build-device
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
source scripts/device/cudnn_env.sh
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
note "gpu: $(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1)"

if [[ " $steps " == *" build "* ]]; then
  start=$(date +%s)
  KILN_TARGETS="${KILN_TARGETS:-kiln kiln_torch kiln_engine_tests kiln_conversion_tests kiln_e2e_tests kiln_torch_library_tests}" \
    scripts/device/build.sh "$build_dir" -DKILN_WITH_CUDA=ON "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -40; tail -20 "$out/build.log"; exit 2; }
  note "build: $(( $(date +%s) - start )) s"
fi

if [[ " $steps " == *" gpu "* ]]; then
  # One ctest entry per suite runs its whole gpu part; -V keeps every test's output in the log.
  timeout 1800 ctest --test-dir "$build_dir" -L gpu -V --timeout 900 >"$out/gpu_tests.log" 2>&1
  note "ctest -L gpu: exit $?"
  grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$out/gpu_tests.log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //' |
    tee -a "$summary"
  note "gtest: $(grep -cE '^[0-9]+: \[       OK \] [A-Za-z]' "$out/gpu_tests.log") ok, $(grep -cE '^[0-9]+: \[  SKIPPED \] [A-Za-z].*\(' "$out/gpu_tests.log") skipped, $(grep -cE '^[0-9]+: \[  FAILED  \] [A-Za-z].*\(' "$out/gpu_tests.log") failed"
  grep -E '^[0-9]+: \[  FAILED  \] [A-Za-z].*\(' "$out/gpu_tests.log" | sed -E 's/^[0-9]+: //' | sort -u | head -40 |
    tee -a "$summary"
  timeout 300 ctest --test-dir "$build_dir" -L torch_library --output-on-failure >"$out/torch_library.log" 2>&1
  note "ctest -L torch_library: exit $? ($(grep -E 'tests passed' "$out/torch_library.log"))"
fi

if [[ " $steps " == *" fixtures "* ]]; then
  kiln=$build_dir/tools/kiln/kiln
  printf '%-28s %-8s %-26s %s\n' fixture result max_abs summary | tee -a "$summary"
  for pt2 in tests/data/*/model.pt2 tests/data/*/model_core_aten.pt2 tests/data/models/*/model.pt2; do
    [ -f "$pt2" ] || continue
    dir=$(dirname "$pt2"); name=$(basename "$dir")/$(basename "$pt2" .pt2)
    log="$out/fixture_$(echo "$name" | tr / _).log"
    result=pass
    if ! "$kiln" compile "$pt2" -o "/tmp/$(echo "$name" | tr / _).kiln" --backend cuda >"$log" 2>&1; then
      result=compile-failed
    else
      for io in "$dir"/io_*.npz; do
        "$kiln" run "/tmp/$(echo "$name" | tr / _).kiln" --inputs "$io" --compare "$io" --atol 1e-3 --rtol 0 \
          >>"$log" 2>&1 || result=FAIL
      done
    fi
    worst=$(grep -o 'max_abs_err [^ ]*' "$log" | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
    what=$(sed -n 's/.*: \([0-9]* engines ([0-9]* nodes\).*(\([0-9]*\) nodes).*/\1, torch \2/p' "$log" | tail -1)
    [ "$result" = pass ] || what="$(grep -v '^output_' "$log" | tail -1 | cut -c1-160)"
    printf '%-28s %-8s %-26s %s\n' "$name" "$result" "$worst" "$what" | tee -a "$summary"
  done
fi
echo "==== summary"
cat "$summary"
