#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: the working tree against another version of Kiln, in one run
# on one card. BASE is a folder holding that version's source tree, made here with
#   rm -rf .ab-base && mkdir .ab-base && git archive REV | tar -x -C .ab-base
# (.ab-base is ignored through .git/info/exclude; pass it in the device call's `carry`). Builds `kiln` and
# `kiln_torch` of both (build-device, and BASE/build-device), runs the FP8 and cuBLASLt engine tests of the
# working tree on cuda, then bench/gpu/bench_gpu.py with the arguments given (default: BERT-base at batch 32
# with FP8, no torch.compile) for the base and then the working tree, and prints both tables. Each side has its
# own Kiln cache folder (KILN_CACHE_DIR: timing and calibration caches), so neither takes the other's choices.
# Usage: scripts/device/ab_bench.sh BASE [bench_gpu.py args...]
set -uo pipefail
base=$(cd "${1:?usage: ab_bench.sh BASE [bench_gpu.py args]}" && pwd)
shift
out=${OUT:-/tmp/kiln-ab}
mkdir -p "$out"
source scripts/device/cudnn_env.sh
start=$(date +%s)
KILN_TARGETS="kiln_engine_tests kiln kiln_torch" scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON \
  "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 2; }
(cd "$base" && KILN_DEVICE_PKGS="$OLDPWD/.device-pkgs" KILN_TARGETS="kiln kiln_torch" \
  bash scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON "${cudnn_cmake_args[@]}") \
  >"$out/build_base.log" 2>&1 || { grep -E "error|Error" "$out/build_base.log" | head -40; exit 2; }
echo "builds: $(( $(date +%s) - start )) s"
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
KILN_TEST_BACKEND=cuda timeout 200 build-device/tests/kiln_engine_tests \
  --gtest_filter='EngineCuda.Fp8*:EngineCuda.CublasLt*:EngineCuda.Matmul*:Fp8Rounding.*' >"$out/tests.log" 2>&1
echo "tests exit code: $?"
grep -E "^\[ +(FAILED|SKIPPED) +\]|Failure" "$out/tests.log" | cut -c1-300 | head -20
[ $# -gt 0 ] || set -- --models bert_base --batches 32 --skip-compile --fp8
for side in base:"$base"/build-device work:"$PWD"/build-device; do
  name=${side%%:*} dir=${side#*:}
  mkdir -p "$out/$name"
  KILN_CACHE_DIR="$out/$name/cache" python3 -X faulthandler bench/gpu/bench_gpu.py --kiln "$dir"/tools/kiln/kiln \
    --lib "$dir"/tools/torch_library/libkiln_torch.so --out "$out/$name" "$@" >"$out/$name/table.txt" 2>&1
  echo "== $name ($(( $(date +%s) - start )) s)"
  tail -6 "$out/$name/table.txt"
done
