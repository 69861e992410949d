#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: exports the CPU benchmark set (bench/cpu: resnet18, resnet50,
# mobilenet_v3_large, efficientnet_b0 and vit_b_16 at 1x3x224x224, BERT-base and GPT-2 small at 1x128; static
# shapes) with torch there, strips the weight payloads (tools/pt2_weights.py strip) so the programs fit the trip
# back, and packs them with their io_0.npz into $OUT/cpu_bench_models.tgz. Here:
#   tar -xzf cpu_bench_models.tgz -C /work/models && python3 tools/pt2_weights.py fill M.stripped.pt2 -o M.pt2
set -uo pipefail
out=${OUT:-/tmp/kiln-cpu-bench}
work=/tmp/kiln-cpu-bench-models
mkdir -p "$out" "$work/packed"
models=(resnet18_224 resnet50_224 mobilenet_v3_large_224 efficientnet_b0_224 vit_b_16 bert_base gpt2_small)
python3 tools/export_fixtures.py --out "$work" "${models[@]}" >"$out/export.log" 2>&1
for m in "${models[@]}"; do
  [ -f "$work/$m/model.pt2" ] || { echo "$m: not exported"; continue; }
  mkdir -p "$work/packed/$m"
  python3 tools/pt2_weights.py strip "$work/$m/model.pt2" -o "$work/packed/$m/model.stripped.pt2" >/dev/null
  cp "$work/$m/io_0.npz" "$work/$m/meta.json" "$work/packed/$m/"
  echo "$m: $(du -sh "$work/packed/$m" | cut -f1)"
done
tar -czf "$out/cpu_bench_models.tgz" -C "$work/packed" .
ls -la "$out"
