#!/usr/bin/env bash
# Engine-cache benchmark: compiles MODEL.pt2 three times with `kiln compile --cache-dir` in a fresh cache and timing
# cache — cold, again (every engine a cache hit, refitted), and (with OTHER.pt2, the same architecture with other
# weights) once more — and prints the wall times and their ratio; then checks that the cached modules compute what
# libtorch computes on IO.npz (max abs error <= 1e-3).
#   bench/compile_cache.sh MODEL.pt2 IO.npz [OTHER.pt2]     (kiln from build/tools/kiln/kiln or $KILN)
set -euo pipefail
model=$1 io=$2 other=${3:-}
kiln=${KILN:-build/tools/kiln/kiln}
work=$(mktemp -d /tmp/kiln-cache-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
flags="--cache-dir $work/engines --timing-cache $work/timing.bin"
# Wall time of a whole `kiln compile` (loading the .pt2, compiling, writing the .kiln) in ms; the log keeps the
# compile phase's own time ("compile: N ms", from -v).
ms() { local s e; s=$(date +%s%N); "$@" >"$work/last.log" 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
phase() { sed -n 's/.*info\] compile: \([0-9.]*\) ms.*/\1/p' "$work/last.log" | tail -1; }
cold=$(ms "$kiln" -v compile "$model" -o "$work/cold.kiln" $flags); cold_phase=$(phase)
warm=$(ms "$kiln" -v compile "$model" -o "$work/warm.kiln" $flags); warm_phase=$(phase)
grep -o '[0-9]* engines from the cache' "$work/last.log"
printf '                         compile phase   whole command (load .pt2, compile, write .kiln)\n'
printf 'empty caches:            %8.1f ms   %6d ms\n' "$cold_phase" "$cold"
printf 'engine cache hit:        %8.1f ms   %6d ms\n' "$warm_phase" "$warm"
printf 'ratio:                   %8s x   %6s x\n' "$(awk -v a="$cold_phase" -v b="$warm_phase" 'BEGIN { printf "%.1f", a / b }')" \
  "$(awk -v a="$cold" -v b="$warm" 'BEGIN { printf "%.1f", a / b }')"
"$kiln" run "$model" --reference --inputs "$io" --outputs "$work/ref.npz" >/dev/null
"$kiln" run "$work/warm.kiln" --inputs "$io" --compare "$work/ref.npz" --atol 1e-3 --rtol 0 | tail -1
if [ -n "$other" ]; then
  again=$(ms "$kiln" -v compile "$other" -o "$work/other.kiln" $flags)
  printf 'other weights:           %8.1f ms   %6d ms   (%s)\n' "$(phase)" "$again" \
    "$(grep -o '[0-9]* engines from the cache' "$work/last.log")"
  "$kiln" run "$other" --reference --inputs "$io" --outputs "$work/ref_other.npz" >/dev/null
  "$kiln" run "$work/other.kiln" --inputs "$io" --compare "$work/ref_other.npz" --atol 1e-3 --rtol 0 | tail -1
fi
