#!/usr/bin/env bash
# Run ON THE GPU MACHINE (torch >= 2.9) from the repository root: exports the Q/DQ fixtures (tools/export_qdq.py)
# into $OUT/qdq (the small ones, for tests/data/qdq) and $OUT/qdq_big (qdq_resnet18 at 224, 12 MB, not bundled), then
# tars each so they come back as files. Prints each fixture's ops and SQNR vs fp32.
set -uo pipefail
out=${OUT:-/tmp/kiln-qdq}
mkdir -p "$out/qdq" "$out/qdq_big"
python3 tools/export_qdq.py --out "$out/qdq" qdq_tiny_resnet qdq_tiny_mlp fq_tiny_resnet fq_tiny_mlp 2>&1 | tee "$out/export_qdq.log"
python3 tools/export_qdq.py --out "$out/qdq_big" qdq_resnet18 2>&1 | tee -a "$out/export_qdq.log"
tar -C "$out" -czf "$out/qdq.tgz" qdq && tar -C "$out" -czf "$out/qdq_big.tgz" qdq_big && rm -rf "$out/qdq" "$out/qdq_big"
ls -la "$out"
