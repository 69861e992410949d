#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: one build (build-device: CUDA and torch; kiln, kiln_torch, the
# engine and e2e tests), then in order, each logged to $OUT: the CUDA layer suite and sweep (gpu_tests.sh), the
# e2e CUDA fixture tests (every bundled fixture compiled for cuda, plain and through CUDA graphs), `kiln bench` of
# tiny_resnet on cuda (graphs by default against plain), and bench/gpu/bench_gpu.py with the arguments given
# (default: --models resnet50 bert_base --batches 1 32 --skip-compile). A short table is printed last.
set -uo pipefail
out=${OUT:-/tmp/kiln-gpu-session}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
source scripts/device/cudnn_env.sh
start=$(date +%s)
KILN_TARGETS="kiln kiln_torch kiln_engine_tests kiln_e2e_tests" scripts/device/build.sh build-device \
  -DKILN_WITH_CUDA=ON "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 2; }
echo "build: $(($(date +%s) - start)) s"
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
OUT="$out" KILN_SKIP_BUILD=1 GPU_TESTS_BUILD=build-device GPU_TESTS_CPU=0 bash scripts/device/gpu_tests.sh \
  >"$out/gpu_summary.txt" 2>&1
KILN_CACHE_DIR=/tmp/kiln-e2e-cache timeout 300 build-device/tests/kiln_e2e_tests --gtest_filter='*Cuda*' \
  >"$out/e2e_cuda.log" 2>&1
echo "e2e cuda exit code: $? ($(grep -c '^\[       OK' "$out/e2e_cuda.log") ok)"
build-device/tools/kiln/kiln compile tests/data/tiny_resnet/model.pt2 -o /tmp/tiny_resnet_cuda.kiln --backend cuda \
  >"$out/bench_tiny_resnet.log" 2>&1
build-device/tools/kiln/kiln bench /tmp/tiny_resnet_cuda.kiln --iters 200 >>"$out/bench_tiny_resnet.log" 2>&1
[ $# -gt 0 ] || set -- --models resnet50 bert_base --batches 1 32 --skip-compile
KILN_SKIP_BUILD=1 OUT="$out" bash scripts/device/bench_gpu.sh "$@" >"$out/bench_gpu.log" 2>&1
head -3 "$out/gpu_summary.txt"
grep -c '^\[       OK' "$out/gpu_tests.log" | sed 's/^/cuda suite tests ok: /'
grep -hE '^\[  FAILED' "$out/gpu_tests.log" "$out/e2e_cuda.log" | sort -u | head
grep -h "tile transform" "$out/gpu_tests.log" | head -2
cat "$out/bench_tiny_resnet.log" | head -8
tail -15 "$out/bench_gpu.log"
