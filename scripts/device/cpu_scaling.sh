#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: how Kiln's CPU engines scale with threads on its 16 cores.
# Prints the machine's CPU limits (affinity, cgroup quota), then per model (default gpt2_small
# mobilenet_v3_large_224) `kiln bench --threads 1,2,4,8,16` (Kiln and libtorch eager in the same process) and the
# per-layer profile at 4 and at 16 threads; also 8 and 16 threads each alone in a fresh process, and what else runs. Builds a CPU-only kiln while the models export (cpu_profile.sh's way).
set -uo pipefail
out=${OUT:-/tmp/kiln-scaling-out}
mkdir -p "$out"
models=/tmp/kiln-cpu-bench-models
build_dir=build-device-cpu
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(gpt2_small mobilenet_v3_large_224)
export PYTHONUNBUFFERED=1
echo "nproc $(nproc); cpu.max $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo none); $(lscpu | grep -E '^Model name|^Socket|^Core|^Thread' | tr -s ' ' | tr '\n' ';')"
python3 tools/export_fixtures.py --out "$models" "${names[@]}" >"$out/export.log" 2>&1 &
exporter=$!
KILN_TARGETS=kiln scripts/device/build.sh "$build_dir" -DKILN_WITH_CUDA=OFF -DKILN_BUILD_TESTS=OFF \
  >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 2; }
wait $exporter
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kiln=$build_dir/tools/kiln/kiln
for m in "${names[@]}"; do
  "$kiln" compile "$models/$m/model.pt2" -o "/tmp/$m.kiln" >"$out/$m.compile.log" 2>&1 || { tail -3 "$out/$m.compile.log"; continue; }
  "$kiln" bench "/tmp/$m.kiln" --inputs "$models/$m/io_0.npz" --threads 1,2,4,8,16 --iters 10 --json >"$out/$m.json" 2>/dev/null
  python3 -c "
import json,sys
r=json.load(open('$out/$m.json'))
print('$m', ' '.join(f\"t{x['threads']}: kiln {x['kiln']['median']:.2f} libtorch {x['reference']['median']:.2f}\" for x in r['runs']))"
  # Each count alone in a fresh process (no libtorch reference run before it in the same process).
  for t in 8 16; do
    "$kiln" bench "/tmp/$m.kiln" --inputs "$models/$m/io_0.npz" --threads $t --iters 10 --json >"$out/$m.alone$t.json" 2>/dev/null
    python3 -c "
import json
r=json.load(open('$out/$m.alone$t.json'))
print('$m alone t$t: kiln', round(r['runs'][0]['kiln']['median'], 2), 'libtorch', round(r['runs'][0]['reference']['median'], 2))"
  done
  top -bn1 | head -14 | tail -8
  for t in 4 16; do
    "$kiln" bench "/tmp/$m.kiln" --inputs "$models/$m/io_0.npz" --threads $t --iters 10 --profile >"$out/$m.profile$t.txt" 2>&1
    echo "-- $m profile at $t threads"; grep -A10 "layer profile" "$out/$m.profile$t.txt" | head -11
    grep -A8 "per kind\|by kind" "$out/$m.profile$t.txt" | head -9
  done
done
