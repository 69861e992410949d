#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: where an FP8 engine's time goes, per layer (issue 20).
# Builds and benches with scripts/device/fp8_session.sh (arguments passed on; default BERT-base at batch 32, no
# torch.compile), which leaves each case's fp16 engine (model.kiln) and fp16+fp8 engine (model_fp8.kiln) in
# /tmp/kiln-bench-gpu/CASE, then runs `kiln bench --profile` (engine layers in device time) on both.
# Writes $OUT/profile_CASE_{fp16,fp8}.txt and prints the 25 slowest layers of each.
set -uo pipefail
out=${OUT:-/tmp/kiln-profile-fp8}
mkdir -p "$out"
OUT="$out" bash scripts/device/fp8_session.sh "$@" || exit $?
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kiln=build-device/tools/kiln/kiln
for dir in /tmp/kiln-bench-gpu/*_b*; do
  name=$(basename "$dir")
  for pair in fp16:model.kiln fp8:model_fp8.kiln; do
    [ -f "$dir/${pair#*:}" ] || continue
    "$kiln" bench "$dir/${pair#*:}" --inputs "$dir/inputs.npz" --iters 50 --warmup 10 --profile \
      >"$out/profile_${name}_${pair%%:*}.txt" 2>&1
    echo "== $name ${pair%%:*}"
    head -60 "$out/profile_${name}_${pair%%:*}.txt"
  done
done
