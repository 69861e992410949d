#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds bench/gpu/flash_attention_bench.cu with the flash
# attention kernel's source (nvcc, sm_90) and prints the device time of each kernel shape (tactics "flash",
# "flash_wide" and "flash_tall") per shape and mask kind, for the working tree and then for each other source
# root given (a folder holding src/engine/backends/cuda/attention/flash_attention.{cu,h} of another version with
# the same launch_flash_attention signature, e.g. made here with `git show REV:PATH` and carried), so that the
# versions are compared in one run on one card.
# Usage: scripts/device/flash_attention_bench.sh [ROOT...]
set -euo pipefail
out=${OUT:-/tmp/kiln-flash}
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader
build() {  # label, source root
  nvcc -O3 -std=c++17 -arch=sm_90 -I"$2/src" -Isrc -Iinclude bench/gpu/flash_attention_bench.cu \
    "$2/src/engine/backends/cuda/attention/flash_attention.cu" -o "/tmp/flash_bench_$1"
}
# Every version builds at once (a minute or two each), then each runs alone; a failed build stops the script
# (no stale binary of an earlier call is run).
labels=(worktree)
roots=(.)
for root in "$@"; do
  labels+=("$(basename "$root")")
  roots+=("$root")
done
pids=()
for i in "${!labels[@]}"; do
  rm -f "/tmp/flash_bench_${labels[$i]}"
  build "${labels[$i]}" "${roots[$i]}" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
for label in "${labels[@]}"; do
  echo "== $label"
  "/tmp/flash_bench_$label" | tee "$out/flash_attention_$label.txt"
done
echo "== torch scaled_dot_product_attention"
python3 bench/gpu/sdpa_reference.py | tee "$out/sdpa_reference.txt"
