#pragma once
// Launch function of the generic attention kernel (attention.cu) and the row addressing both attention
// tactics share, shared by nvcc and g++ (launch.h says how).

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

// ---- Generic attention (attention.cu) ----

/// Where the rows of one attention operand lie: row r of flat batch index b starts at element
/// offset + (b / heads) * outer + ((b % heads) / group) * inner + r * row; the row's columns are contiguous.
/// Dense [batch, L, E]: heads 1, outer L * E, row E; strided views (AttentionView) give any of them; group >
/// 1 for the k and v of grouped-query attention (AttentionParams::kv_group).
struct AttnRows {
  int64_t heads = 1, group = 1, outer = 0, inner = 0, row = 0, offset = 0;
#ifdef __CUDACC__
  __host__ __device__
#endif
      int64_t
      start(int64_t b) const {
    return offset + (b / heads) * outer + ((b % heads) / group) * inner;
  }
};
struct AttnParams {
  int64_t batch = 1, lq = 1, lk = 1, e = 1, ev = 1;
  AttnRows rows[4];  // q, k, v, out
  float scale = 1;
  bool causal = false;
  int mask_kind = 0;  // 0 none, 1 bool (true = keep), 2 additive float of dtype mask_dtype
  int mask_dtype = kF32;
  Shape batch_shape;                   // the batch dims (product = batch)
  int64_t mask_st[kMaxRank + 2] = {};  // mask element strides over batch dims, then Lq, Lk (0 = broadcast)
};
/// softmax(q k^T * scale + mask) v; one block per query row; scores kept in shared memory (lk <=
/// kMaxAttnKeys).
constexpr int64_t kMaxAttnKeys = 12288;
void launch_attention(const void* q, const void* k, const void* v, const void* mask, void* out, int dtype,
                      const AttnParams& p, Stream stream);

}  // namespace kiln::engine::cuda
