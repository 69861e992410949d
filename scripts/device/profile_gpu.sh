#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: where the time of the bench/gpu models goes, per layer.
# Builds `kiln` and `kiln_torch` (scripts/device/build.sh, reusing build-device), exports the models through
# bench/gpu/bench_gpu.py (no torch.compile, few iterations: it only leaves model.pt2 and inputs.npz per case in
# /tmp/kiln-bench-gpu), then per case compiles for cuda in fp16 with every tactic choice logged (no caches) and runs
# `kiln bench --profile` (engine layers in device time, back to back); the compile log's "timed:" lines give the
# builder's device times per candidate.
# Usage: scripts/device/profile_gpu.sh [bench_gpu.py args, e.g. --models resnet50 --batches 1]
# Writes $OUT/profile.tgz (compile_CASE.log, profile_CASE.txt) and prints each case's medians.
set -uo pipefail
out=${OUT:-/tmp/kiln-profile-gpu}
mkdir -p "$out"
bash scripts/device/bench_gpu.sh --skip-compile --iters 20 --warmup 5 "$@" >"$out/bench.txt" 2>&1 ||
  echo "bench_gpu.sh: exit $? (see $out/bench.txt); profiling what was exported"
cudnn_root=$(python3 -c 'import nvidia.cudnn; print(nvidia.cudnn.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${cudnn_root:+$cudnn_root/lib:}${LD_LIBRARY_PATH:-}"
kiln=build-device/tools/kiln/kiln
for dir in /tmp/kiln-bench-gpu/*_b*; do
  [ -f "$dir/model.pt2" ] || continue
  name=$(basename "$dir")
  KILN_LOG_LEVEL=info "$kiln" compile "$dir/model.pt2" -o "$dir/profiled.kiln" --backend cuda --precision fp16 \
    --no-cache --verbose >"$out/compile_$name.log" 2>&1
  "$kiln" bench "$dir/profiled.kiln" --inputs "$dir/inputs.npz" --iters 50 --warmup 10 --profile \
    >"$out/profile_$name.txt" 2>&1
  echo "$name: $(grep -E '^  (kiln|reference) ' "$out/profile_$name.txt" | tr -s ' ' | tr '\n' ' ')"
done
(cd "$out" && tar czf profile.tgz compile_*.log profile_*.txt && rm -f compile_*.log profile_*.txt)
