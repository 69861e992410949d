#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: INT8 convolutions on cuda (issue 20). Builds the engine tests,
# `kiln` and `kiln_torch` in build-device (CUDA on, with torch), runs the INT8 and cuDNN-graph convolution engine
# tests on cuda ($OUT/int8_tests.log), then, when they pass, bench/gpu/bench_gpu.py --int8 with the arguments
# given (default: resnet50 at batch 256, no torch.compile, one calibration batch).
# INT8_SKIP_BENCH=1 stops after the tests; KILN_SKIP_BUILD=1 skips the build.
set -uo pipefail
out=${OUT:-/tmp/kiln-int8}
mkdir -p "$out"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
source scripts/device/cudnn_env.sh
start=$(date +%s)
if [ -z "${KILN_SKIP_BUILD:-}" ]; then
  KILN_TARGETS="kiln_engine_tests kiln kiln_torch" scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON \
    "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 2; }
  echo "build: $(( $(date +%s) - start )) s"
fi
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
KILN_TEST_BACKEND=cuda timeout 300 build-device/tests/kiln_engine_tests \
  --gtest_filter='EngineCuda.Int8*:EngineCudaNhwc.*:EngineCuda.ConvGraph*:EngineCudaConvGraph.*' \
  >"$out/int8_tests.log" 2>&1
rc=$?
echo "int8 tests exit code: $rc"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure|error" "$out/int8_tests.log" | cut -c1-300 | head -40
[ "$rc" = 0 ] || exit 1
[ -n "${INT8_SKIP_BENCH:-}" ] && exit 0
[ $# -gt 0 ] || set -- --models resnet50 --batches 256 --skip-compile --fp8-batches 1
KILN_SKIP_BUILD=1 OUT="$out" bash scripts/device/bench_gpu.sh --int8 "$@" 2>&1 | tail -12
