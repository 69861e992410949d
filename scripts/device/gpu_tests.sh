#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds the engine tests with the CUDA backend (no torch) and
# runs the gpu-labeled layer suite and the backend-conformance sweep (KILN_TEST_BACKEND=cuda). Logs go to $OUT
# (or /tmp/kiln-gpu); a pass/fail table is printed last. cuDNN comes from the system toolkit or the nvidia-cudnn
# Python wheel. GPU_TESTS_BUILD: the build folder (default build-gpu, configured without torch); KILN_SKIP_BUILD=1
# uses the tests already built there; GPU_TESTS_CPU=0 skips the CPU engine suite at the end; GPU_TESTS_FILTER (a
# gtest filter) runs only those cuda tests; GPU_TESTS_SWEEP=0 skips the sweep.
set -uo pipefail
out=${OUT:-/tmp/kiln-gpu}
mkdir -p "$out"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
source scripts/device/cudnn_env.sh
build_dir=${GPU_TESTS_BUILD:-build-gpu}
if [ -z "${KILN_SKIP_BUILD:-}" ]; then
  KILN_TARGETS=kiln_engine_tests scripts/device/build.sh "$build_dir" -DKILN_WITH_TORCH=OFF -DKILN_WITH_CUDA=ON \
    "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; tail -20 "$out/build.log"; exit 2; }
  grep -i "cudnn\|CUDA backend" "$out/build.log" | head -5
fi
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# The suites the gpu ctest runs on cuda (tests/engine/suite.cmake), but the sweep (below).
KILN_TEST_BACKEND=cuda timeout 300 "$build_dir"/tests/kiln_engine_tests \
  --gtest_filter="${GPU_TESTS_FILTER:-EngineLayers.*:EngineCuda.*:EngineMemoryViews.*:EngineAttentionViews.*:PrecisionPolicy.*}" \
  >"$out/gpu_tests.log" 2>&1
echo "gpu tests exit code: $?"
# The backend-conformance sweep on cuda (docs/engine.md): every cuda kernel row against the reference.
if [ "${GPU_TESTS_SWEEP:-1}" != 0 ]; then
  KILN_TEST_BACKEND=cuda KILN_SWEEP_VERBOSE=1 timeout 300 "$build_dir"/tests/kiln_engine_tests \
    --gtest_filter='BackendSweep.*' >"$out/sweep.log" 2>&1
  echo "cuda sweep exit code: $? ($(grep -o 'coverage: .*' "$out/sweep.log"))"
  grep -A2 -E "Failure$" "$out/sweep.log" | grep -vE "Failure$|^--|^Failed$" | cut -c1-300 | head -40
fi
if [ "${GPU_TESTS_CPU:-1}" != 0 ]; then
  timeout 120 "$build_dir"/tests/kiln_engine_tests >"$out/cpu_tests.log" 2>&1
  echo "cpu engine suite exit code: $? ($(grep -c '^\[       OK' "$out/cpu_tests.log") ok)"
fi
grep -E "Failure|error|differ|not supported" "$out/gpu_tests.log" | cut -c1-400 | head -60
echo "---- $(cat "$out/gpu.txt")"
grep -E '^\[ +(OK|FAILED|SKIPPED) +\] [A-Za-z]+\.' "$out/gpu_tests.log" | sed -E 's/\(.*//' | sort -u
