#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang-14, ASan + UBSan, no libtorch) and runs one or all of them for a given
# time each, on one core each, one after the other. docs/fuzzing.md describes the targets and what CI runs.
#
#   scripts/fuzz.sh TARGET|all SECONDS [libFuzzer flags...]
#
# TARGET is a folder of fuzz/ (zip, npz, sym_expr, ir_text, pt2, plan, settings, kiln_archive). Each run starts from the
# target's seeds (fuzz/TARGET/seeds, never written to) and its working corpus build-fuzz/corpus/TARGET (kept
# between runs, so a longer run goes on where the last stopped), with the target's dictionary. A finding (crash,
# sanitizer report, uncaught exception, one input running over 30 s (a hang), more than 2 GiB RSS or one allocation
# over 1 GiB) is saved as build-fuzz/artifacts/TARGET/<kind>-<sha1>; the script prints how to reproduce it and
# exits 1. At the end of each target it prints one line: executions, coverage (edges, features), corpus size.
#
# Environment: KILN_FUZZ_BUILD (build folder, default build-fuzz), KILN_FUZZ_NO_BUILD=1 (use the targets as built),
# KILN_JOBS (build jobs).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
target="$1"
seconds="$2"
shift 2
targets=(zip npz sym_expr ir_text pt2 plan settings kiln_archive)
if [ "$target" = all ]; then
  selected=("${targets[@]}")
elif [ -d "fuzz/$target/seeds" ]; then
  selected=("$target")
else
  echo "fuzz: no target '$target' (targets: ${targets[*]} or all)" >&2
  exit 2
fi
case "$seconds" in
  '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;;
esac

build="${KILN_FUZZ_BUILD:-build-fuzz}"
if [ "${KILN_FUZZ_NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_FUZZ=ON \
      -DKILN_WITH_TORCH=OFF -DKILN_WITH_CUDA=OFF -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF >/dev/null
  fi
  ninja -C "$build" -j"${KILN_JOBS:-$(nproc)}" "${selected[@]/#/fuzz_}" >/dev/null
fi

# Leaks are findings too; UBSan stops at the first report (the build has -fno-sanitize-recover).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

status=0
for t in "${selected[@]}"; do
  corpus="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  log="$build/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  rc=0
  # The seeds go in as a list in name order, not as a folder: libFuzzer runs a folder in the order the file
  # system lists it, which differs between machines, and with it everything a fixed -seed explores.
  seeds="$build/corpus/$t.seeds"
  find "fuzz/$t/seeds" -type f | LC_ALL=C sort | paste -sd, - >"$seeds"
  "$build/fuzz/fuzz_$t" "$corpus" -seed_inputs="@$seeds" -dict="fuzz/$t/$t.dict" -max_total_time="$seconds" \
    -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$@" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz: $t: ${execs:-?} executions (limit $seconds s), coverage ${cov:-?} edges / ${ft:-?} features," \
      "corpus ${corp:-?} (inputs/bytes): no finding"
  else
    status=1
    found=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    echo "fuzz: $t: FINDING after ${execs:-?} executions (exit $rc): ${found:-see $log}" >&2
    grep -E 'ERROR: |fuzz finding:|runtime error:|SUMMARY: ' "$log" | head -5 >&2 || true
    [ -n "$found" ] && echo "fuzz:   reproduce: $build/fuzz/fuzz_$t $found" >&2
    echo "fuzz:   full log: $log" >&2
  fi
done
exit "$status"
