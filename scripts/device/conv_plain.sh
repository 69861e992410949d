#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: the plain-mode (no CUDA graphs) check of the cuda convolution
# path. gpu_session.sh (build, CUDA layer suite and sweep, e2e CUDA fixtures, bench/gpu table for the models and
# batches given, default resnet50 efficientnet_b0 regnet_y_1_6gf at batch 1 and 32, no torch.compile), then
# `kiln bench --profile` of every benchmarked case's module (engine layers in device time). Long: start it with
# setsid nohup and OUT=/tmp/<folder> (not the call's $OUT: the next device call clears that folder, and with it
# the logs of a job still running), then copy the folder to $OUT in the call that collects it.
set -uo pipefail
out=${OUT:-/tmp/kiln-conv-plain}
mkdir -p "$out"
[ $# -gt 0 ] || set -- --models resnet50 efficientnet_b0 regnet_y_1_6gf --batches 1 32 --skip-compile
OUT="$out" bash scripts/device/gpu_session.sh "$@"
cudnn_root=$(python3 -c 'import nvidia.cudnn; print(nvidia.cudnn.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${cudnn_root:+$cudnn_root/lib:}${LD_LIBRARY_PATH:-}"
# The module compiled for graph replay and, with --plain-compile, the one compiled with --no-cuda-graphs.
for dir in /tmp/kiln-bench-gpu/*_b*; do
  for module in model model_plain; do
    [ -f "$dir/$module.kiln" ] || continue
    name=$(basename "$dir")_$module
    build-device/tools/kiln/kiln bench "$dir/$module.kiln" --inputs "$dir/inputs.npz" --iters 50 --warmup 10 \
      --profile >"$out/profile_$name.txt" 2>&1
    echo "== $name: $(grep -E '^  kiln' "$out/profile_$name.txt" | tr -s ' ' | tr '\n' ' ')"
    grep -A12 "ms/run" "$out/profile_$name.txt" | head -13
  done
done
