#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds `kiln` (scripts/device/build.sh) while the zoo models
# export, then runs the model-zoo conformance suite (bench/zoo/zoo.py): every zoo model exported as users export
# it, compiled for cpu fp32, cuda fp32 and cuda fp16, run and compared with eager fp32. Arguments go to zoo.py:
#   bash scripts/device/zoo.sh                         # the whole zoo, every target
#   bash scripts/device/zoo.sh resnet18 bert --targets cpu
# Resumable: results append to $ZOO_RESULTS (default bench/zoo/results.jsonl; a file that does not exist yet is
# seeded from bench/zoo/results.jsonl) and entries already there are skipped, so the table fills across calls.
# $OUT gets zoo_results.jsonl, zoo_table.md (the table of bench/zoo/README.md) and zoo_logs.tgz (every log).
# ZOO_BUILD: the build folder (default build-device); KILN_SKIP_BUILD=1 reuses it as it is; ZOO_TIME_LIMIT:
# seconds this script may take (no job starts later than ZOO_MARGIN, default 100, seconds before; default: no
# limit).
set -uo pipefail
start=$(date +%s)
out=${OUT:-/tmp/kiln-zoo-out}
mkdir -p "$out"
build_dir=${ZOO_BUILD:-build-device}
results=${ZOO_RESULTS:-bench/zoo/results.jsonl}
[ -f "$results" ] || { [ -f bench/zoo/results.jsonl ] && cp bench/zoo/results.jsonl "$results"; }
work=${ZOO_WORK:-/tmp/kiln-zoo}
zoo=(python3 bench/zoo/zoo.py --kiln "$build_dir/tools/kiln/kiln" --work "$work" --results "$results")
export PYTHONUNBUFFERED=1
# Exporting needs no kiln: it runs while kiln builds.
"${zoo[@]}" --export-only "$@" >"$out/zoo_export.log" 2>&1 &
exporter=$!
source scripts/device/cudnn_env.sh
if [ -z "${KILN_SKIP_BUILD:-}" ]; then
  KILN_TARGETS="kiln" scripts/device/build.sh "$build_dir" -DKILN_WITH_CUDA=ON -DKILN_BUILD_TESTS=OFF "${cudnn_cmake_args[@]}" \
    >"$out/build_zoo.log" 2>&1 || { grep -E "error|Error" "$out/build_zoo.log" | head -40; kill $exporter; exit 2; }
fi
wait $exporter
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
deadline=()
if [ -n "${ZOO_TIME_LIMIT:-}" ]; then
  deadline=(--deadline $((ZOO_TIME_LIMIT - ($(date +%s) - start) - ${ZOO_MARGIN:-100})))
fi
"${zoo[@]}" --table "$out/zoo_table.md" "${deadline[@]}" "$@"
rc=$?
[ "$results" -ef "$out/zoo_results.jsonl" ] || cp "$results" "$out/zoo_results.jsonl"
(cd "$work" && tar czf "$out/zoo_logs.tgz" */*.log 2>/dev/null)
exit $rc
