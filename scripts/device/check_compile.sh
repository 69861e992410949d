#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root (its 16 cores and torch 2.11 export what this machine cannot):
# exports real models with torch (random weights), then compiles each with `kiln compile` (default settings, cpu
# backend) and runs the compiled module on every io_N with `kiln run --compare` (max abs error <= 1e-3 is the
# bar; cosine similarity is printed and checked >= 0.9999 here). One table: engine nodes / all nodes of the
# lowered graph, worst max abs error and worst cosine. Then exports the benchmark programs (resnet18 at
# 1x3x224x224, BERT-base at 1x128) with their weight payloads stripped (tools/pt2_weights.py) into $OUT, so that
# they fit the trip back; `tools/pt2_weights.py fill` restores random weights here. Usage:
#   scripts/device/check_compile.sh [MODEL ...]   (default: the torchvision and transformers set)
set -uo pipefail
out=${OUT:-/tmp/kiln-check}
mkdir -p "$out/logs"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 resnet50 mobilenet_v3_large efficientnet_b0 vit_b_16 convnext_tiny swin_t
                                   bert gpt2 t5_encoder)
work=/tmp/kiln-models
mkdir -p "$work"
(python3 tools/export_fixtures.py --out "$work" --core-aten "${models[@]}" >"$out/logs/export.log" 2>&1
 [ -n "${KILN_SKIP_BENCH_EXPORT:-}" ] ||
   python3 tools/export_fixtures.py --out "$work" resnet18_224 bert_base >"$out/logs/export_bench.log" 2>&1) &
export_pid=$!
# KILN_BUILD_DIR: use the kiln binary already built there (by scripts/device/build.sh) instead of building.
build_dir=${KILN_BUILD_DIR:-build-device}
if [ -z "${KILN_BUILD_DIR:-}" ]; then
  KILN_TARGETS=kiln scripts/device/build.sh "$build_dir" -DKILN_BUILD_TESTS=OFF >"$out/logs/build.log" 2>&1 ||
    { tail -40 "$out/logs/build.log"; wait; exit 2; }
fi
wait "$export_pid"
grep -h FAILED "$out/logs/export.log" | cut -c1-400
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kiln=$build_dir/tools/kiln/kiln
table="$out/compile_table.txt"
printf '%-19s %-16s %-9s %-9s %-7s %-11s %-10s %s\n' model form in_engine all_nodes engines max_abs cosine result >"$table"
for m in "${models[@]}"; do
  for form in model model_core_aten; do
    pt2="$work/$m/$form.pt2"
    [ -f "$pt2" ] || { printf '%-19s %-16s %s\n' "$m" "$form" "not exported" >>"$table"; continue; }
    log="$out/logs/$m.$form.log"
    if ! "$kiln" compile "$pt2" -o "$work/$m/$form.kiln" >"$log" 2>&1; then
      printf '%-19s %-16s compile failed: %s\n' "$m" "$form" "$(tail -1 "$log" | cut -c1-200)" >>"$table"; continue
    fi
    # "compiled A -> B: E engines (N nodes, P plan bytes), R PyTorch runs (T nodes)"
    read -r engines nodes torch_nodes < <(sed -n 's/.*: \([0-9]*\) engines (\([0-9]*\) nodes.* (\([0-9]*\) nodes).*/\1 \2 \3/p' "$log")
    worst_abs=0 worst_cos=1 result=pass
    for io in "$work/$m"/io_*.npz; do
      "$kiln" run "$work/$m/$form.kiln" --inputs "$io" --compare "$io" --atol 1e-3 --rtol 0 >>"$log" 2>&1 || result=FAIL
    done
    worst_abs=$(grep -o 'max_abs_err [^ ]*' "$log" | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
    worst_cos=$(grep -o 'cosine [^ ]*' "$log" | awk 'BEGIN { m = 1 } { if ($2 < m) m = $2 } END { print m }')
    awk -v c="$worst_cos" 'BEGIN { exit !(c < 0.9999) }' && result=FAIL
    total=$(( ${nodes:-0} + ${torch_nodes:-0} ))
    printf '%-19s %-16s %-9s %-9s %-7s %-11s %-10s %s\n' "$m" "$form" "${nodes:-?}" "$total" "${engines:-?}" \
      "$worst_abs" "$worst_cos" "$result" >>"$table"
  done
done
# Benchmark programs, weights stripped for the trip back (KILN_SKIP_BENCH_EXPORT=1: not needed).
[ -n "${KILN_SKIP_BENCH_EXPORT:-}" ] || for m in resnet18_224 bert_base; do
  [ -f "$work/$m/model.pt2" ] || { echo "$m not exported"; continue; }
  python3 tools/pt2_weights.py strip "$work/$m/model.pt2" -o "$out/$m.stripped.pt2"
  cp "$work/$m/io_0.npz" "$out/$m.io_0.npz"
done
tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$out/logs"
cat "$table"
