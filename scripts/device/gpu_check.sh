#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds Kiln with the CUDA backend against the installed torch's
# libtorch (scripts/device/build.sh), then runs on the GPU:
#   - the engine layer suite on the CUDA backend (KILN_TEST_BACKEND=cuda) and the EngineCuda tests,
#   - the converter harness on cpu and cuda (KILN_TEST_BACKENDS=cuda),
#   - every bundled fixture compiled with `kiln compile --backend cuda` and compared with torch's outputs
#     (`kiln run --compare`, max abs <= 1e-3 at fp32),
# and prints one summary table last. Logs go to $OUT (or /tmp/kiln-gpu-check).
# KILN_GPU_CHECK_STEPS (default "build engine conversion fixtures") picks steps; the build directory is
# build-device and is reused when present.
set -uo pipefail
out=${OUT:-/tmp/kiln-gpu-check}
mkdir -p "$out"
steps=${KILN_GPU_CHECK_STEPS:-build engine conversion fixtures}
build_dir=build-device
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
cudnn_root=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else nvidia.cudnn.__path__[0])' 2>/dev/null || true)
extra=()
[ -n "$cudnn_root" ] && extra+=(-DCUDNN_ROOT="$cudnn_root") && export LD_LIBRARY_PATH="$cudnn_root/lib:${LD_LIBRARY_PATH:-}"
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
note "gpu: $(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1)"

if [[ " $steps " == *" build "* ]]; then
  start=$(date +%s)
  KILN_TARGETS="${KILN_TARGETS:-kiln kiln_torch kiln_engine_tests kiln_conversion_tests kiln_torch_library_tests}" \
    scripts/device/build.sh "$build_dir" -DKILN_WITH_CUDA=ON "${extra[@]}" >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -40; tail -20 "$out/build.log"; exit 2; }
  note "build: $(( $(date +%s) - start )) s"
fi

if [[ " $steps " == *" engine "* ]]; then
  KILN_TEST_BACKEND=cuda timeout 300 "$build_dir"/tests/kiln_engine_tests --gtest_filter='EngineLayers.*:EngineCuda.*' \
    >"$out/engine_cuda.log" 2>&1
  note "engine layer suite on cuda: exit $? ($(grep -c '^\[       OK' "$out/engine_cuda.log") ok, $(grep -c '^\[  FAILED  \] [A-Z]' "$out/engine_cuda.log") failed)"
  grep '^\[  FAILED  \] [A-Z]' "$out/engine_cuda.log" | sort -u | head -30 | tee -a "$summary"
fi

if [[ " $steps " == *" conversion "* ]]; then
  KILN_TEST_BACKENDS=cuda timeout 400 "$build_dir"/tests/kiln_conversion_tests >"$out/conversion_cuda.log" 2>&1
  note "converter harness on cpu+cuda: exit $? ($(grep -c '^\[       OK' "$out/conversion_cuda.log") ok, $(grep -c '^\[  FAILED  \] [A-Z]' "$out/conversion_cuda.log") failed)"
  grep '^\[  FAILED  \] [A-Z]' "$out/conversion_cuda.log" | sort -u | head -40 | tee -a "$summary"
  timeout 120 "$build_dir"/tests/kiln_torch_library_tests >"$out/torch_library.log" 2>&1
  note "torch_library tests: exit $?"
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
