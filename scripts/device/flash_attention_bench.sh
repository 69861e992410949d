#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds bench/gpu/flash_attention_bench.cu with the flash
# attention kernel's source (nvcc, sm_90) and prints the device time of both kernel shapes (4 and 8 warps a CTA:
# tactics "flash" and "flash_wide") per shape and mask kind, for the working tree and then for each other source
# root given (a folder holding src/engine/backends/cuda/attention/flash_attention.{cu,h} of another version with
# the same launch_flash_attention signature, e.g. made here with `git show REV:PATH` and carried), so that the
# versions are compared in one run on one card.
# Usage: scripts/device/flash_attention_bench.sh [ROOT...]
set -euo pipefail
out=${OUT:-/tmp/kiln-flash}
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader
build_and_run() {  # label, source root
  nvcc -O3 -std=c++17 -arch=sm_90 -I"$2/src" -Isrc -Iinclude bench/gpu/flash_attention_bench.cu \
    "$2/src/engine/backends/cuda/attention/flash_attention.cu" -o "/tmp/flash_bench_$1"
  echo "== $1"
  "/tmp/flash_bench_$1" | tee "$out/flash_attention_$1.txt"
}
build_and_run worktree .
for root in "$@"; do
  build_and_run "$(basename "$root")" "$root"
done
echo "== torch scaled_dot_product_attention"
python3 bench/gpu/sdpa_reference.py | tee "$out/sdpa_reference.txt"
