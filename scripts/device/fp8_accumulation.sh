#!/usr/bin/env bash
# Run ON THE GPU MACHINE after scripts/device/fp8_session.sh (same machine: it reuses build-device): an experiment
# that lands nothing. Turns cuBLASLt's FP8 fast accumulation off (kFp8FastAccumulation = 0 in a patched copy of
# src/engine/backends/cuda/linalg/matmul.cpp on that machine: partial sums promoted to fp32 along K), rebuilds
# `kiln` and `kiln_torch` incrementally and runs bench/gpu/bench_gpu.py --fp8 with the arguments given (default:
# BERT-base at batch 32, no torch.compile), to compare with the fp8_session.sh figures of the same call (compiled
# with --no-cache: no timing-cache choices made with the other accumulation). Logs under $OUT/accumulation.
set -uo pipefail
out=${OUT:-/tmp/kiln-fp8}/accumulation
mkdir -p "$out"
sed -i 's/constexpr int8_t kFp8FastAccumulation = 1;/constexpr int8_t kFp8FastAccumulation = 0;/' \
  src/engine/backends/cuda/linalg/matmul.cpp
grep -q "kFp8FastAccumulation = 0;" src/engine/backends/cuda/linalg/matmul.cpp || { echo "patch failed"; exit 2; }
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
source scripts/device/cudnn_env.sh
ninja -C build-device kiln kiln_torch >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 2; }
[ $# -gt 0 ] || set -- --models bert_base --batches 32 --skip-compile
KILN_SKIP_BUILD=1 OUT="$out" bash scripts/device/bench_gpu.sh --fp8 --work /tmp/kiln-bench-accumulation \
  --kiln-flag=--no-cache "$@" 2>&1 | tail -6
