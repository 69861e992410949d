#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: Kiln's CPU engines before and after a change, on its 16-core
# CPU, at several thread counts. AB_PATCH (required) is a patch (`git diff OLD NEW`, carried in a folder that
# .git/info/exclude ignores) that this tree is the NEW side of: the "before" tree is a copy with it reversed.
# Builds both CPU-only `kiln`s side by side while the models export, then per model (default gpt2_small
# mobilenet_v3_large_224) compiles with each and runs `kiln bench --threads $AB_THREADS` (default 1,4,8,16)
# before, after, before, after, each in a fresh process. $OUT gets the logs and ab.jsonl; the table is printed last.
set -uo pipefail
out=${OUT:-/tmp/kiln-ab-out}
mkdir -p "$out"
models=/tmp/kiln-cpu-bench-models
patch_file=${AB_PATCH:?AB_PATCH: the patch from before to this tree}
threads=${AB_THREADS:-1,4,8,16}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(gpt2_small mobilenet_v3_large_224)
export PYTHONUNBUFFERED=1
old_tree=/tmp/kiln-before
rm -rf "$old_tree" && mkdir -p "$old_tree"
tar --exclude='./build*' --exclude=./.device-pkgs -cf - . | tar -xf - -C "$old_tree"
patch -d "$old_tree" -p1 -R -s <"$patch_file" || { echo "the patch does not reverse onto this tree"; exit 2; }
ln -sfn "$PWD/.device-pkgs" "$old_tree/.device-pkgs"
python3 tools/export_fixtures.py --out "$models" "${names[@]}" >"$out/export.log" 2>&1 &
exporter=$!
build() {  # build(TREE, LOG)
  (cd "$1" && KILN_TARGETS=kiln scripts/device/build.sh build-ab -DKILN_WITH_CUDA=OFF -DKILN_BUILD_TESTS=OFF) >"$2" 2>&1
}
build "$old_tree" "$out/build-before.log" &
before_build=$!
build "$PWD" "$out/build-after.log" || { grep -E "error" "$out/build-after.log" | head -20; exit 2; }
wait $before_build || { grep -E "error" "$out/build-before.log" | head -20; exit 2; }
wait $exporter
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
declare -A kiln=([before]="$old_tree/build-ab/tools/kiln/kiln" [after]="$PWD/build-ab/tools/kiln/kiln")
for m in "${names[@]}"; do
  for side in before after; do
    KILN_CACHE_DIR=/tmp/kiln-ab-cache-$side "${kiln[$side]}" compile "$models/$m/model.pt2" -o "/tmp/$m.$side.kiln" \
      >"$out/$m.$side.compile.log" 2>&1 || { tail -3 "$out/$m.$side.compile.log"; continue 2; }
  done
  for round in 1 2; do
    for side in before after; do
      "${kiln[$side]}" bench "/tmp/$m.$side.kiln" --inputs "$models/$m/io_0.npz" --threads "$threads" --iters 10 \
        --warmup 3 --json 2>/dev/null | python3 -c "
import json, sys
r = json.load(sys.stdin)
for x in r['runs']:
    print(json.dumps({'model': '$m', 'side': '$side', 'round': $round, 'threads': x['threads'],
                      'kiln': x['kiln']['median'], 'libtorch': x['reference']['median']}))" >>"$out/ab.jsonl"
    done
  done
done
python3 - "$out/ab.jsonl" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r['model'], r['threads']) for r in rows})
print('| model | threads | before ms | after ms | before / after | libtorch ms |')
print('|---|---|---|---|---|---|')
for m, t in keys:
    pick = lambda side: [r['kiln'] for r in rows if (r['model'], r['threads'], r['side']) == (m, t, side)]
    b, a = statistics.median(pick('before')), statistics.median(pick('after'))
    lt = statistics.median(r['libtorch'] for r in rows if (r['model'], r['threads']) == (m, t))
    print(f'| {m} | {t} | {b:.2f} | {a:.2f} | {b / a:.2f}x | {lt:.2f} |')
PY
