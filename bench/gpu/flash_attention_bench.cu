// Device time of the cuda flash attention kernels (src/engine/backends/cuda/attention/flash_attention.cu:
// the tactics "flash", CTAs of 4 warps of 16 query rows, "flash_wide", 8 of 16, and "flash_tall", 4 of 32)
// alone, at the shapes of the bench/gpu transformers, with each kind of mask a model can hand it: none, a
// boolean key mask broadcast over the query rows (what a padding mask becomes), a boolean and an additive
// (f32, f16) mask of [batch, 1, Lq, Lk]; and llama_small's causal attention (12 query heads over 4 key /
// value heads, sequence 512). Built and run by scripts/device/flash_attention_bench.sh; prints one line per
// case: for each kernel, the median over 30 samples of 20 back-to-back launches (CUDA events), in
// microseconds, and the rate in TFLOPS of the two products (4 * batch * heads * Lq * Lk * E).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/backends/cuda/attention/flash_attention.h"

using namespace kiln::engine::cuda;

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Case {
  std::string name;
  int64_t batch, heads, lq, lk, e;
  bool causal = false;
  int64_t kv_group = 1;  // query heads per key / value head (grouped-query attention)
};

enum class Mask { None, KeyBool, FullBool, FullF32, FullF16 };
const char* mask_name(Mask m) {
  switch (m) {
    case Mask::None: return "no mask";
    case Mask::KeyBool: return "bool [B,1,1,Lk]";
    case Mask::FullBool: return "bool [B,1,Lq,Lk]";
    case Mask::FullF32: return "f32 [B,1,Lq,Lk]";
    case Mask::FullF16: return "f16 [B,1,Lq,Lk]";
  }
  return "?";
}

void run(const Case& c, Mask m) {
  const int64_t rows = c.batch * c.heads;
  std::vector<__half> host(static_cast<size_t>(rows * std::max(c.lq, c.lk) * c.e));
  const int64_t kv_rows = rows / c.kv_group;
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = __float2half(static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f);
  void *q, *k, *v, *o, *mask = nullptr;
  const size_t qbytes = rows * c.lq * c.e * 2, kbytes = kv_rows * c.lk * c.e * 2;
  check(cudaMalloc(&q, qbytes), "malloc");
  check(cudaMalloc(&k, kbytes), "malloc");
  check(cudaMalloc(&v, kbytes), "malloc");
  check(cudaMalloc(&o, qbytes), "malloc");
  check(cudaMemcpy(q, host.data(), qbytes, cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(k, host.data(), kbytes, cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(v, host.data(), kbytes, cudaMemcpyHostToDevice), "copy");

  AttnParams p;
  p.batch = rows;
  p.lq = c.lq;
  p.lk = c.lk;
  p.e = p.ev = c.e;
  p.scale = 0.125f;
  p.batch_shape.rank = 2;
  p.batch_shape.d[0] = c.batch;
  p.batch_shape.d[1] = c.heads;
  p.causal = c.causal;
  for (int i = 0; i < 4; ++i) {
    const int64_t l = i == 1 || i == 2 ? c.lk : c.lq;
    p.rows[i] = AttnRows{1, 1, l * c.e, 0, c.e, 0};
  }
  for (int i : {1, 2})
    p.rows[i] = AttnRows{c.heads, c.kv_group, c.heads / c.kv_group * c.lk * c.e, c.lk * c.e, c.e, 0};
  // Every key kept but the last 16 of each batch (a padded sequence).
  const int64_t keep = c.lk - 16;
  if (m != Mask::None) {
    const bool full = m != Mask::KeyBool;
    const int64_t per_batch = full ? c.lq * c.lk : c.lk;
    const int64_t n = c.batch * per_batch;
    p.mask_st[0] = per_batch;
    p.mask_st[1] = 0;
    p.mask_st[2] = full ? c.lk : 0;
    p.mask_st[3] = 1;
    if (m == Mask::KeyBool || m == Mask::FullBool) {
      p.mask_kind = 1;
      std::vector<unsigned char> mk(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) mk[i] = (i % c.lk) < keep;
      check(cudaMalloc(&mask, n), "malloc");
      check(cudaMemcpy(mask, mk.data(), n, cudaMemcpyHostToDevice), "copy");
    } else if (m == Mask::FullF32) {
      p.mask_kind = 2;
      p.mask_dtype = kF32;
      std::vector<float> mk(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) mk[i] = (i % c.lk) < keep ? 0.0f : -1e4f;
      check(cudaMalloc(&mask, n * 4), "malloc");
      check(cudaMemcpy(mask, mk.data(), n * 4, cudaMemcpyHostToDevice), "copy");
    } else {
      p.mask_kind = 2;
      p.mask_dtype = kF16;
      std::vector<__half> mk(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) mk[i] = __float2half((i % c.lk) < keep ? 0.0f : -1e4f);
      check(cudaMalloc(&mask, n * 2), "malloc");
      check(cudaMemcpy(mask, mk.data(), n * 2, cudaMemcpyHostToDevice), "copy");
    }
  }
  cudaStream_t s;
  check(cudaStreamCreate(&s), "stream");
  constexpr int kReps = 20, kSamples = 30;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const double flops = 4.0 * rows * c.lq * c.lk * c.e / (c.causal ? 2 : 1);
  std::printf("%-14s %-18s", c.name.c_str(), mask_name(m));
  for (auto [shape, label] : {std::pair{FlashShape::k4Warps, "4x16"}, std::pair{FlashShape::k8Warps, "8x16"},
                              std::pair{FlashShape::k4WarpsTall, "4x32"}}) {
    const char* why = nullptr;
    if (!flash_attention_fits_device(shape, c.e, &why)) {
      std::printf("  %s %s", label, why);
      continue;
    }
    check(static_cast<cudaError_t>(prepare_flash_attention(shape, c.e)), "prepare");
    for (int i = 0; i < 5; ++i) launch_flash_attention(q, k, v, mask, o, kF16, p, s, {}, shape);
    check(cudaStreamSynchronize(s), "warm-up");
    std::vector<float> us;
    for (int i = 0; i < kSamples; ++i) {
      cudaEventRecord(a, s);
      for (int r = 0; r < kReps; ++r) launch_flash_attention(q, k, v, mask, o, kF16, p, s, {}, shape);
      cudaEventRecord(b, s);
      check(cudaEventSynchronize(b), "run");
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      us.push_back(ms * 1000.0f / kReps);
    }
    std::nth_element(us.begin(), us.begin() + kSamples / 2, us.end());
    const double t = us[kSamples / 2];
    std::printf("  %s %7.1f us %6.1f TFLOPS", label, t, flops / (t * 1e6));
  }
  std::printf("\n");
  for (void* ptr : {q, k, v, o, mask}) cudaFree(ptr);
  cudaStreamDestroy(s);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

}  // namespace

int main() {
  const std::vector<Case> cases = {{"bert_base b32", 32, 12, 128, 128, 64},
                                   {"bert_base b1", 1, 12, 128, 128, 64},
                                   {"vit_b_16 b32", 32, 12, 197, 197, 64},
                                   {"seq 512 b8", 8, 12, 512, 512, 64},
                                   {"llama causal b32", 32, 12, 512, 512, 64, true, 3},
                                   {"llama causal b1", 1, 12, 512, 512, 64, true, 3}};
  for (const Case& c : cases) {
    for (Mask m : {Mask::None, Mask::KeyBool, Mask::FullBool, Mask::FullF32, Mask::FullF16}) {
      if ((c.name.rfind("vit", 0) == 0 || c.causal) && m != Mask::None) continue;
      run(c, m);
    }
  }
  return 0;
}
