#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root (torch 2.x trains and exports what this machine cannot): trains
# the synthetic-task models of tools/train_synthetic.py (seconds on a GPU), exports them, and packs the folders
# into $OUT/synthetic.tgz. Here:
#   mkdir -p /work/models/synthetic && tar -xzf synthetic.tgz -C /work/models/synthetic
#   python3 bench/cpu/int8_task.py --models /work/models/synthetic --kiln build/tools/kiln/kiln
set -uo pipefail
out=${OUT:-/tmp/kiln-synthetic}
work=/tmp/kiln-synthetic-models
mkdir -p "$out" "$work"
python3 tools/train_synthetic.py --out "$work" "$@" 2>&1 | tee "$out/train_synthetic.log" | grep -v Warning
tar -czf "$out/synthetic.tgz" -C "$work" .
ls -la "$out"
