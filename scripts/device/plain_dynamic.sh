#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: convolution networks exported as users export them for
# serving, batch dynamic (1..64), compiled for cuda in fp16 and run by `kiln bench` at batch 1 and 32; such an
# engine runs without CUDA graphs (plain mode), so this is the speed a dynamic-shape user gets. Each model is
# also exported with a static batch of 1 and timed in the same call: graphs (its default) and plain (graphs
# off; its tactics were chosen on device time). Usage: scripts/device/plain_dynamic.sh [MODEL...] (default
# regnet_y_1_6gf efficientnet_b0). Builds kiln (build-device) unless KILN_SKIP_BUILD=1.
set -uo pipefail
out=${OUT:-/tmp/kiln-plain-dynamic}
work=/tmp/kiln-plain-dynamic-work
mkdir -p "$out" "$work"
[ $# -gt 0 ] || set -- regnet_y_1_6gf efficientnet_b0
cudnn_root=$(python3 -c 'import nvidia.cudnn; print(nvidia.cudnn.__path__[0])' 2>/dev/null || true)
if [ -z "${KILN_SKIP_BUILD:-}" ]; then
  KILN_TARGETS="kiln" scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON ${cudnn_root:+-DCUDNN_ROOT=$cudnn_root} \
    >"$out/build.log" 2>&1 || { grep -E " error|Error " "$out/build.log" | head -30; exit 2; }
fi
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${cudnn_root:+$cudnn_root/lib:}${LD_LIBRARY_PATH:-}"
python3 - "$work" "$@" <<'PY' >"$out/export.log" 2>&1
import os, sys
import torch
from torch.export import Dim
sys.path.insert(0, "bench/gpu")
import bench_gpu
work, models = sys.argv[1], sys.argv[2:]
for name in models:
    model = bench_gpu.build_model(name).eval()
    for kind, batch, shapes in (("dynamic", 4, ({0: Dim("batch", min=1, max=64)},)), ("static", 1, None)):
        ep = torch.export.export(model, (torch.randn(batch, 3, 224, 224),), dynamic_shapes=shapes)
        torch.export.save(ep, os.path.join(work, f"{name}_{kind}.pt2"))
        print(name, kind, "exported", flush=True)
PY
kiln=build-device/tools/kiln/kiln
printf "%-16s %6s %10s %10s\n" model batch plain_ms graphs_ms
for name in "$@"; do
  for kind in dynamic static; do
    pt2=$work/${name}_$kind.pt2
    [ -f "$pt2" ] || { echo "$name $kind: not exported (see export.log)"; continue; }
    "$kiln" compile "$pt2" -o "$work/${name}_$kind.kiln" --backend cuda --precision fp16 --no-cache \
      >"$out/compile_${name}_$kind.log" 2>&1 || { tail -3 "$out/compile_${name}_$kind.log"; continue; }
    for b in 1 32; do
      [ "$kind" = static ] && [ "$b" = 32 ] && continue  # the static export is batch 1
      shape="x=${b}x3x224x224"
      "$kiln" bench "$work/${name}_$kind.kiln" --shape "$shape" --iters 100 --warmup 20 >"$out/bench_${name}_${kind}_$b.txt" 2>&1
      plain=$(grep -E '^  kiln plain' "$out/bench_${name}_${kind}_$b.txt" | awk '{print $6}')
      first=$(grep -E '^  kiln ' "$out/bench_${name}_${kind}_$b.txt" | head -1 | awk '{print $5}')
      printf "%-16s %6s %10s %10s  (%s)\n" "$name" "$b" "${plain:-$first}" "$([ -n "$plain" ] && echo "$first" || echo -)" "$kind${plain:+, static: graphs by default}"
    done
  done
done
