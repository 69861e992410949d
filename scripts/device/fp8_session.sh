#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: FP8 matmuls (issue 20). Builds the engine tests, `kiln` and
# `kiln_torch` in one build folder (build-device, CUDA on, with torch), runs the FP8 and cuBLASLt engine tests on
# cuda with cuBLASLt's error and hint log (CUBLASLT_LOG_MASK=5) in $OUT/fp8_tests.log, then, when they pass,
# bench/gpu/bench_gpu.py --fp8 with the arguments given (default: BERT-base at batch 32, no torch.compile).
# FP8_SKIP_BENCH=1 stops after the tests.
set -uo pipefail
out=${OUT:-/tmp/kiln-fp8}
mkdir -p "$out"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
source scripts/device/cudnn_env.sh
start=$(date +%s)
KILN_TARGETS="kiln_engine_tests kiln kiln_torch" scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON \
  "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 2; }
echo "build: $(( $(date +%s) - start )) s"
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
CUBLASLT_LOG_MASK=5 KILN_TEST_BACKEND=cuda timeout 200 build-device/tests/kiln_engine_tests \
  --gtest_filter='EngineCuda.Fp8*:EngineCuda.CublasLt*:Fp8Rounding.*' >"$out/fp8_tests.log" 2>&1
rc=$?
echo "fp8 tests exit code: $rc"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure|error|\[cublasLt\]" "$out/fp8_tests.log" | cut -c1-300 | head -40
[ "$rc" = 0 ] || exit 1
[ -n "${FP8_SKIP_BENCH:-}" ] && exit 0
[ $# -gt 0 ] || set -- --models bert_base --batches 32 --skip-compile
KILN_SKIP_BUILD=1 OUT="$out" bash scripts/device/bench_gpu.sh --fp8 "$@" 2>&1 | tail -12
