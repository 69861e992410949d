#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: exports real models with torch (random weights), then for
# each one runs `kiln inspect --json` and reference execution (`kiln run --reference --compare`) on every
# io_N of both forms, and prints one table. Logs go to $OUT (or /tmp/kiln-check). Usage:
#   scripts/device/check_models.sh [MODEL ...]   (default: the torchvision and transformers set)
set -uo pipefail
out=${OUT:-/tmp/kiln-check}
mkdir -p "$out"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 resnet50 mobilenet_v3_large efficientnet_b0 vit_b_16 swin_t convnext_tiny
                                   bert gpt2 t5_encoder)
work=/tmp/kiln-models
mkdir -p "$work"
# Export (CPU-bound Python) while Kiln builds.
python3 tools/export_fixtures.py --out "$work" --core-aten "${models[@]}" >"$out/export.log" 2>&1 &
export_pid=$!
KILN_TARGETS=kiln scripts/device/build.sh build-device >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; wait; exit 2; }
wait "$export_pid" || tail -20 "$out/export.log"
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kiln=build-device/tools/kiln/kiln
printf '%-20s %-16s %6s %6s %-10s %s\n' model form ops kinds io result >"$out/table.txt"
for m in "${models[@]}"; do
  for form in model model_core_aten; do
    pt2="$work/$m/$form.pt2"
    [ -f "$pt2" ] || { printf '%-20s %-16s %s\n' "$m" "$form" "not exported" >>"$out/table.txt"; continue; }
    "$kiln" inspect "$pt2" --json >"$out/$m.$form.inspect.json" 2>"$out/$m.$form.inspect.err"
    ops=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(d['ops'].values()), len(d['ops']))" \
          "$out/$m.$form.inspect.json" 2>/dev/null || echo "? ?")
    for io in "$work/$m"/io_*.npz; do
      res=$("$kiln" run "$pt2" --reference --inputs "$io" --compare "$io" 2>&1 | tail -1 | cut -c1-300)
      printf '%-20s %-16s %6s %6s %-10s %s\n' "$m" "$form" ${ops} "$(basename "$io")" "$res" >>"$out/table.txt"
    done
  done
done
cat "$out/table.txt"
