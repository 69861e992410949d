#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds `kiln` and `kiln_torch` (scripts/device/build.sh, reusing
# build-device) and runs bench/gpu/bench_gpu.py, which prints the Kiln / eager / torch.compile table.
# Extra arguments go to bench_gpu.py (e.g. --models resnet50 --batches 1).
set -uo pipefail
out=${OUT:-/tmp/kiln-bench-gpu}
mkdir -p "$out"
source scripts/device/cudnn_env.sh
if [ -z "${KILN_SKIP_BUILD:-}" ]; then
  KILN_TARGETS="kiln kiln_torch" scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON "${cudnn_cmake_args[@]}" \
    >"$out/build_bench.log" 2>&1 || { grep -E "error|Error" "$out/build_bench.log" | head -40; exit 2; }
fi
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
python3 -X faulthandler bench/gpu/bench_gpu.py --kiln build-device/tools/kiln/kiln \
  --lib build-device/tools/torch_library/libkiln_torch.so --out "$out" "$@"
