#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: Kiln's CPU engines against ONNX Runtime's CPU execution provider
# and torch.compile (Inductor, CPU) on the machine's 16-core CPU (issue 22's peer table). Builds a CPU-only `kiln`
# (scripts/device/build.sh) while the CPU benchmark set exports (tools/export_fixtures.py), then runs
# bench/cpu/peers.py at 1 and 16 threads. Arguments: model names (default: the whole set).
# $OUT gets peers.jsonl, peers.log (with the markdown table last), build.log and export.log.
# PEERS_DEADLINE: start no model after this many seconds of benchmarking (default 330). PEERS_BUILD: the build
# folder (default build-device-cpu); KILN_SKIP_BUILD=1 uses the `kiln` already there (a CUDA build's `kiln` runs
# `--backend cpu` the same).
set -uo pipefail
out=${OUT:-/tmp/kiln-peers-out}
mkdir -p "$out"
models=/tmp/kiln-cpu-bench-models
build_dir=${PEERS_BUILD:-build-device-cpu}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(resnet18_224 resnet50_224 mobilenet_v3_large_224 efficientnet_b0_224 vit_b_16
  bert_base gpt2_small)
export PYTHONUNBUFFERED=1
python3 tools/export_fixtures.py --out "$models" "${names[@]}" >"$out/export.log" 2>&1 &
exporter=$!
if [ -z "${KILN_SKIP_BUILD:-}" ]; then
  KILN_TARGETS=kiln scripts/device/build.sh "$build_dir" -DKILN_WITH_CUDA=OFF -DKILN_BUILD_TESTS=OFF \
    >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 2; }
fi
wait $exporter
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
python3 bench/cpu/peers.py --models "$models" --kiln "$build_dir/tools/kiln/kiln" --threads 1,16 \
  --results "$out/peers.jsonl" --deadline "${PEERS_DEADLINE:-330}" --work /tmp/kiln-peers "${names[@]}" \
  >"$out/peers.log" 2>&1
tail -20 "$out/peers.log"
