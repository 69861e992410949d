#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: checks and measures a change to the decoder path (attention,
# norms, rotary embeddings) in one call. The zoo's decoders export while one build (build-device: kiln,
# kiln_torch, the engine and conversion tests) runs; then the cuda attention / norm / reduce suites and the
# sweep (gpu_tests.sh), the converter cases on cuda, the zoo's decoders compiled for cuda fp32 and fp16 against
# eager fp32, and last, detached (it outlasts a call), bench/gpu/bench_gpu.py of llama_small and gpt2_small at
# batch 1 and 32 followed by `kiln bench --profile` of llama_small at batch 32: collect
# /tmp/kiln-decoder-bench/{bench.log,profile_llama_b32.txt,done} in a later call.
# DECODER_MODELS: the zoo models (default: llama mistral qwen2 gemma phi); DECODER_BENCH: bench_gpu.py's
# arguments (default: --models llama_small gpt2_small --batches 1 32; the profile needs llama_small at 32);
# DECODER_TESTS: the gtest filter of the cuda suite (default: attention, norms, reductions, the layer suite);
# DECODER_WAIT=1: the bench and the profile run in this call (their logs copied to $OUT) instead of detached,
# for a short DECODER_BENCH (a warm machine goes back 30 s after a call, taking a detached bench with it).
set -uo pipefail
out=${OUT:-/tmp/kiln-decoder-session}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
start=$(date +%s)
read -r -a models <<<"${DECODER_MODELS:-llama mistral qwen2 gemma phi}"
zoo=(python3 bench/zoo/zoo.py --kiln build-device/tools/kiln/kiln --work /tmp/kiln-zoo --results /tmp/decoder_zoo.jsonl)
"${zoo[@]}" --export-only "${models[@]}" >"$out/zoo_export.log" 2>&1 &
exporter=$!
source scripts/device/cudnn_env.sh
KILN_TARGETS="kiln kiln_torch kiln_engine_tests kiln_conversion_tests" scripts/device/build.sh build-device \
  -DKILN_WITH_CUDA=ON "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -30; kill $exporter; exit 2; }
echo "build: $(($(date +%s) - start)) s"
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
OUT="$out" KILN_SKIP_BUILD=1 GPU_TESTS_BUILD=build-device GPU_TESTS_CPU=0 \
  GPU_TESTS_FILTER="${DECODER_TESTS:-EngineLayers.*:EngineCuda.*Attention*:EngineCuda.*Flash*:EngineCuda.*Norm*:EngineCuda.*Softmax*:EngineCuda.Reduce*:EngineAttentionViews.*}" \
  bash scripts/device/gpu_tests.sh >"$out/gpu_summary.txt" 2>&1
KILN_TEST_BACKENDS=cuda timeout 300 build-device/tests/kiln_conversion_tests \
  --gtest_filter='*Linalg*:*Shuffle*:*Indexing*:*Normalization*:*Reorder*:CausalMask.*:AttentionMask*' \
  >"$out/conversion_cuda.log" 2>&1
echo "conversion cuda exit code: $? ($(grep -c '^\[       OK' "$out/conversion_cuda.log") ok)"
wait $exporter
"${zoo[@]}" --targets cuda,cuda-fp16 --redo --table "$out/zoo_table.md" "${models[@]}" >"$out/zoo.log" 2>&1
echo "zoo exit code: $?"
# Detached: the bench and the profile (collected by a later call).
bench=/tmp/kiln-decoder-bench
rm -rf "$bench" && mkdir -p "$bench"
bench_job="KILN_SKIP_BUILD=1 OUT=$bench bash scripts/device/bench_gpu.sh \
  ${DECODER_BENCH:---models llama_small gpt2_small --batches 1 32} --work $bench > $bench/bench.log 2>&1; build-device/tools/kiln/kiln bench $bench/llama_small_b32/model.kiln \
  --iters 50 --warmup 5 --profile > $bench/profile_llama_b32.txt 2>&1; touch $bench/done"
if [ "${DECODER_WAIT:-0}" = 1 ]; then
  bash -c "$bench_job"
  cp "$bench/bench.log" "$bench/profile_llama_b32.txt" "$out/" 2>/dev/null
else
  setsid nohup bash -c "$bench_job" >/dev/null 2>&1 &
fi
head -4 "$out/gpu_summary.txt"
grep -c '^\[       OK' "$out/gpu_tests.log" | sed 's/^/cuda suite tests ok: /'
grep -hE '^\[  FAILED' "$out/gpu_tests.log" "$out/conversion_cuda.log" | sort -u | head -20
tail -12 "$out/zoo.log"
echo "total: $(($(date +%s) - start)) s"
