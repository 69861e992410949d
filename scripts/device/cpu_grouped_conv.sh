#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: reproduces the CPU run failure of grouped convolutions (issue
# 16: resnext50_32x4d and wav2vec2 fail at `kiln run` with oneDNN's "could not execute a primitive"). Builds `kiln`
# (CPU only), exports the models as the zoo does, compiles them for the CPU, then runs each module with
# ONEDNN_VERBOSE=2 (every primitive created and executed) and `kiln bench --profile` (each layer's tactic and
# formats). $OUT gets one log per model and step. Arguments: zoo model names (default: resnext50_32x4d wav2vec2).
set -uo pipefail
out=${OUT:-/tmp/kiln-gconv-out}
mkdir -p "$out"
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnext50_32x4d wav2vec2)
work=/tmp/kiln-gconv
export PYTHONUNBUFFERED=1
python3 bench/zoo/zoo.py --work "$work" --results "$work/results.jsonl" --export-only "${models[@]}" \
  >"$out/export.log" 2>&1 &
exporter=$!
KILN_TARGETS=kiln scripts/device/build.sh build-device -DKILN_WITH_CUDA=OFF -DKILN_BUILD_TESTS=OFF \
  >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 2; }
wait $exporter
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# The cause found (src/engine/backends/cpu/onednn/onednn_common.h, sgemm_runs): libtorch_cpu.so's own oneDNN
# exports the std::call_once helper of oneDNN's sgemm kernel generation, as Debian's libdnnl.so.2 does.
torch_cpu=$(python3 -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cpu.so'))")
echo "call_once helpers of gemm_info_t::jit_init exported by $torch_cpu:" \
  "$(nm -D --defined-only "$torch_cpu" | grep -c 'Prepare_execution.*gemm_info_t.*jit_init')"
kiln=build-device/tools/kiln/kiln
for m in "${models[@]}"; do
  dir="$work/$m"
  [ -f "$dir/model.pt2" ] || { echo "$m: not exported"; continue; }
  $kiln compile "$dir/model.pt2" -o "$out/$m.kiln" --backend cpu >"$out/$m.compile.log" 2>&1
  echo "$m: compile rc=$?"
  ONEDNN_VERBOSE=2 $kiln run "$out/$m.kiln" --inputs "$dir/io.npz" --outputs /tmp/$m.out.npz >"$out/$m.run.log" 2>&1
  echo "$m: run rc=$?"
  grep -v "^onednn_verbose" "$out/$m.run.log" | tail -5
  grep "^onednn_verbose" "$out/$m.run.log" | grep -E "convolution" | tail -4
  $kiln bench "$out/$m.kiln" --inputs "$dir/io.npz" --iters 1 --warmup 0 --profile >"$out/$m.profile.log" 2>&1
  echo "$m: bench --profile rc=$?"
  rm -f "$out/$m.kiln"
done
