#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: CPU-engine speed of a few models of the CPU benchmark set on
# the machine's 16-core CPU, under several OpenMP wait settings, with a per-layer profile. Builds a CPU-only
# `kiln` while the models export (as scripts/device/cpu_peers.sh does). Arguments: model names (default
# bert_base vit_b_16). PROFILE_THREADS: thread counts (default 1,16). PROFILE_ENVS: space-separated settings
# each run is timed under ("-" = Kiln's default). $OUT gets one log per model and setting, and the profiles.
set -uo pipefail
out=${OUT:-/tmp/kiln-profile-out}
mkdir -p "$out"
models=/tmp/kiln-cpu-bench-models
build_dir=build-device-cpu
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(bert_base vit_b_16)
export PYTHONUNBUFFERED=1
python3 tools/export_fixtures.py --out "$models" "${names[@]}" >"$out/export.log" 2>&1 &
exporter=$!
KILN_TARGETS=kiln scripts/device/build.sh "$build_dir" -DKILN_WITH_CUDA=OFF -DKILN_BUILD_TESTS=OFF \
  >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 2; }
wait $exporter
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kiln=$build_dir/tools/kiln/kiln
threads=${PROFILE_THREADS:-1,16}
for m in "${names[@]}"; do
  "$kiln" compile "$models/$m/model.pt2" -o "/tmp/$m.kiln" >"$out/$m.compile.log" 2>&1 || { tail -3 "$out/$m.compile.log"; continue; }
  for setting in ${PROFILE_ENVS:--}; do
    env_args=()
    [ "$setting" = - ] || env_args=("$setting")
    tag=${setting//[^A-Za-z0-9]/_}
    env "${env_args[@]}" "$kiln" bench "/tmp/$m.kiln" --inputs "$models/$m/io_0.npz" --threads "$threads" --iters 20 \
      --json >"$out/$m.$tag.json" 2>"$out/$m.$tag.err"
    python3 - "$m" "$setting" "$out/$m.$tag.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[3]))
print(sys.argv[1], sys.argv[2], " ".join(f"t{x['threads']}: kiln {x['kiln']['median']:.2f} libtorch {x['reference']['median']:.2f}" for x in r["runs"]))
PY
  done
  "$kiln" bench "/tmp/$m.kiln" --inputs "$models/$m/io_0.npz" --threads "${threads##*,}" --iters 10 --profile \
    >"$out/$m.profile.txt" 2>&1
  grep -A14 "layer profile" "$out/$m.profile.txt" | head -16
done
