// The "flash" attention kernel (see flash_attention.h for the scheme).
//
// Fragment layouts (PTX ISA, mma.m16n8k16 with .f16/.bf16 inputs and .f32 accumulators; g = lane / 4,
// t = lane % 4): A (16x16, row) register r holds row g + 8 * (r & 1), columns 2t, 2t + 1 (+ 8 when r >= 2);
// B (16x8, col) register r holds rows 2t, 2t + 1 (+ 8 when r = 1) of column g; C/D hold row g (c0, c1) and
// g + 8 (c2, c3), columns 2t, 2t + 1. ldmatrix .x4 loads four 8x8 matrices whose row addresses come from
// lanes 8i..8i+7, and gives lane l of matrix i row l / 4, columns 2 (l % 4), +1 (.trans: the transpose).
// So the S accumulators of two adjacent 8-key chunks are exactly the A operand of P V for 16 keys, and P
// never leaves registers.

#include <cstdint>
#include <cstring>

#include "engine/backends/cuda/attention/attention_launch.h"
#include "engine/backends/cuda/attention/flash_attention.h"
#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/linalg/e4m3.cuh"

namespace kiln::engine::cuda {
namespace {

static_assert(kFlashKeys % 16 == 0, "key tiles are whole mma k-steps");

/// A CTA shape: kWarps warps, each owning kFrags fragments of 16 query rows (FlashShape).
template <int kWarpsOf, int kFragsOf>
struct Cta {
  static constexpr int kWarps = kWarpsOf, kFrags = kFragsOf, kWarpRows = 16 * kFrags,
                       kRows = kWarps * kWarpRows, kThreads = kWarps * 32;
};
using Cta4 = Cta<kFlashWarps, 1>;
using Cta8 = Cta<kFlashWideWarps, 1>;
using Cta4Tall = Cta<kFlashWarps, 2>;
constexpr float kLog2e = 1.4426950408889634f;

/// Keys of a mask row (a mask broadcast over the queries, such as a padding mask) staged in shared memory.
constexpr int kMaskRowKeys = 512;

/// Shared-memory layout for padded head dim D (elements of 16 bits) and kRows query rows. Each row is padded
/// by 8 elements, so the 8 row addresses of one ldmatrix (rows 2 (D + 8) bytes apart) fall 16 bytes apart
/// modulo 128: no bank conflicts. Q tile, then two K tiles, then two V tiles (double buffering), then, in the
/// kernel of kind kRowMask only (kRowBytes more), the mask row (kMaskRowKeys floats, log2_mask_value).
template <int D, int kRows>
struct Smem {
  static constexpr int kLd = D + 8;
  static constexpr int kTile = kFlashKeys * kLd;
  static constexpr int kK = kRows * kLd;
  static constexpr int kV = kK + 2 * kTile;
  static constexpr int kMaskRow = kV + 2 * kTile;  // 16-byte aligned: every tile is a multiple of 8 elements
  static constexpr size_t kBytes = static_cast<size_t>(kMaskRow) * sizeof(uint16_t);
  static constexpr size_t kRowBytes = kMaskRowKeys * sizeof(float);
};

__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// 16 bytes from global to shared memory, asynchronously; zeros when !valid (nothing is read then).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/// The tensor-core step d += a b for one 16-bit input type, and the packing of two floats into the
/// 16-bit pair an operand register holds (the lower column in the lower half).
template <typename T>
struct Mma;

template <>
struct Mma<__half> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    uint32_t r;
    memcpy(&r, &h, sizeof(r));
    return r;
  }
  /// The value of one element's bits.
  static __device__ __forceinline__ float unpack(uint16_t bits) {
    return __half2float(__ushort_as_half(bits));
  }
};

template <>
struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    uint32_t r;
    memcpy(&r, &h, sizeof(r));
    return r;
  }
  static __device__ __forceinline__ float unpack(uint16_t bits) {
    return __bfloat162float(__ushort_as_bfloat16(bits));
  }
};

/// Copies rows [0, rows) x columns [0, cols) of a row-major global matrix (row stride `ld` elements) into a
/// kRows x D shared tile, zeros elsewhere (padding rows and head-dim columns must be 0, never stale: a stale
/// NaN times a zero probability would still be NaN). `vec`: 16-byte cp.async (cols % 8 == 0, aligned rows);
/// otherwise plain element copies.
template <int D, int kRows, int kThreads>
__device__ __forceinline__ void load_tile(uint16_t* s, const uint16_t* g, int rows, int cols, int64_t ld,
                                          bool vec) {
  constexpr int kLd = D + 8;  // Smem's
  if (vec) {
    constexpr int kChunks = D / 8;
    static_assert(kRows * kChunks % kThreads == 0, "whole rounds of 16-byte chunks");
#pragma unroll
    for (int round = 0; round < kRows * kChunks / kThreads; ++round) {
      int i = round * kThreads + threadIdx.x, r = i / kChunks, c = (i % kChunks) * 8;
      bool ok = r < rows && c < cols;
      cp_async_16(shared_addr(s + r * kLd + c), ok ? g + static_cast<int64_t>(r) * ld + c : g, ok);
    }
  } else {
    for (int i = threadIdx.x; i < kRows * D; i += kThreads) {
      int r = i / D, c = i % D;
      s[r * kLd + c] = r < rows && c < cols ? g[static_cast<int64_t>(r) * ld + c] : uint16_t{0};
    }
  }
}

/// A mask element as the kernels apply it to a score: a boolean mask gives 0 (keep) or -inf (drop), an
/// additive one its value times log2(e) (added to the score in log2 units).
template <typename M>
__device__ __forceinline__ float log2_mask_value(M raw) {
  if constexpr (sizeof(M) == 1) {
    return raw ? 0.0f : -INFINITY;
  } else {
    return static_cast<float>(raw) * kLog2e;
  }
}

/// Stages the mask row of one (batch, head) (elements base + key * st_k, key < lk <= kMaskRowKeys) into
/// shared memory as log2_mask_value, for a mask that is the same for every query.
template <typename M, int kThreads>
__device__ __forceinline__ void stage_mask_row(float* row, const M* mask, int64_t base, int64_t st_k,
                                               int lk) {
  for (int key = threadIdx.x; key < lk; key += kThreads) row[key] = log2_mask_value(mask[base + key * st_k]);
}

/// The mask values of one lane's scores in a key tile, loaded before the scores are computed so that the
/// loads' latency hides behind the tensor-core work: m[c][i] for the score of accumulator c, element i (key
/// k0 + 8c + 2t + (i & 1), query row q_row + 8 (i >> 1)), as log2_mask_value. Out-of-range rows and keys read
/// element `base` (any value: those scores are dropped or never stored). Each branch issues all of its loads
/// before using them.
template <int kNk, typename M>
__device__ __forceinline__ void load_mask(float (&m)[kNk][4], const M* mask, int64_t base, int64_t st_q,
                                          int64_t st_k, int k0, int q_row, int t, int lq, int lk) {
  M raw[kNk][4];
  if (st_q == 0) {  // one mask row for every query (a key-padding mask): half the loads
#pragma unroll
    for (int c = 0; c < kNk; ++c) {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int key = k0 + c * 8 + 2 * t + i;
        raw[c][i] = raw[c][i + 2] = mask[key < lk ? base + key * st_k : base];
      }
    }
  } else {
#pragma unroll
    for (int c = 0; c < kNk; ++c) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int key = k0 + c * 8 + 2 * t + (i & 1), qi = q_row + ((i >> 1) << 3);
        raw[c][i] = mask[key < lk && qi < lq ? base + qi * st_q + key * st_k : base];
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kNk; ++c) {
#pragma unroll
    for (int i = 0; i < 4; ++i) m[c][i] = log2_mask_value(raw[c][i]);
  }
}

/// 2^x as one MUFU.EX2, results below 2^-126 flushed to 0 (exp2f keeps subnormal results at the cost of a
/// test and two multiplies around it). Every argument here is <= 0 (a score minus its row's maximum): a
/// probability below 2^-126 adds nothing to a row's sum in fp32 nor to P in the 16-bit type; -inf gives 0.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

/// CTAs per SM the register allocation must allow (__launch_bounds__): 4 (128 registers a thread) up to head
/// dim 64, as many as an H100's or H200's shared memory holds (228 KB; an A100's holds 3, others fewer, where
/// the cap costs registers and gains nothing); 2 for 128. Without it the prefetched mask values took the
/// kernels past 128 registers: unmasked, 16 -> 19 us at BERT-base's shape, 43 -> 56 at vit_b_16's (H200).
/// Counted for 4 warps: a CTA of 8 warps has half as many beside it, so each shape gets the same register cap
/// a thread (128 up to head dim 64, 255 at 128). A warp of two fragments holds twice the accumulators: 2
/// CTAs (255 registers), as FlashAttention-2's 128-row CTAs of 4 warps.
template <int D, typename C>
constexpr int kMinCtas = C::kFrags == 1 ? (D <= 64 ? 16 : 8) / C::kWarps : 2;

/// The kernels' mask kinds (AttnParams::mask_kind), a template parameter so that each kernel holds registers
/// only for the mask it reads.
enum MaskKind : int { kNoMask = 0, kBoolMask = 1, kAdditiveMask = 2 };
/// The kernels' fourth mask kind, chosen at launch: a mask (boolean or additive, p.mask_kind says which) that
/// is the same for every query (stride 0 along Lq, a padding mask) with Lk <= kMaskRowKeys, staged in shared
/// memory once instead of each lane loading its keys' values in every tile; its own kernel, so that the
/// registers of the other kinds' prefetched values are not added to it.
constexpr int kRowMask = 3;

/// The dynamic shared memory of the kernel of mask kind kMask.
template <int D, typename C, int kMask>
constexpr size_t kSmemBytes = Smem<D, C::kRows>::kBytes +
                              (kMask == kRowMask ? Smem<D, C::kRows>::kRowBytes : 0);

/// One CTA of shape C: query rows [q0, q0 + C::kRows) of one (batch, head) bh. Warp w owns rows q0 + w
/// C::kWarpRows .. + C::kWarpRows - 1, as C::kFrags fragments of 16; lane (g, t) holds rows g and g + 8 of
/// each. Every K / V fragment a warp reads from shared memory feeds one MMA per fragment. kMask: p.mask_kind,
/// or kRowMask.
template <typename T, int D, int kMask, typename C>
__global__ void __launch_bounds__(C::kThreads, kMinCtas<D, C>)
    flash_attention_kernel(const uint16_t* __restrict__ q, const uint16_t* __restrict__ k,
                           const uint16_t* __restrict__ v, const void* __restrict__ mask,
                           uint16_t* __restrict__ out, E4m3Out out8, AttnParams p, int q_tiles, bool vec) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using S = Smem<D, C::kRows>;
  constexpr int kLd = S::kLd, kNk = kFlashKeys / 8, kNd = D / 8, kRows = C::kRows, kThreads = C::kThreads,
                kFrags = C::kFrags, kWarpRows = C::kWarpRows;
  extern __shared__ __align__(16) unsigned char flash_smem[];
  uint16_t* sq = reinterpret_cast<uint16_t*>(flash_smem);
  uint16_t* sk = sq + S::kK;
  uint16_t* sv = sq + S::kV;

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  // ldmatrix row addresses: lane l feeds row l % 8 of matrix l / 8.
  const int mat = lane >> 3, mrow = lane & 7;
  // Causal CTAs go out in order of falling work (every (batch, head)'s last query tile, which reads the most
  // keys, first), so that the lightest CTAs make the tail; the others by (batch, head), K / V shared in L2.
  int64_t bh;
  int q0;
  if (p.causal) {
    bh = blockIdx.x % p.batch;
    q0 = (q_tiles - 1 - static_cast<int>(blockIdx.x / p.batch)) * kRows;
  } else {
    bh = blockIdx.x / q_tiles;
    q0 = static_cast<int>(blockIdx.x % q_tiles) * kRows;
  }
  const int lq = static_cast<int>(p.lq), lk = static_cast<int>(p.lk), e = static_cast<int>(p.e),
            ev = static_cast<int>(p.ev);
  // Row addressing of each operand (dense or a strided view; rows of the head dim contiguous).
  const int64_t ldk = p.rows[1].row, ldv = p.rows[2].row;
  const uint16_t* kg = k + p.rows[1].start(bh);
  const uint16_t* vg = v + p.rows[2].start(bh);
  // Scores in the kernel's units up to the exponent: an additive mask is added in log2 units (q . k times
  // scale_log2, then the mask: one FMA), other scores stay q . k, scaled in the exponent's FMA that subtracts
  // the row's maximum (p.scale > 0, attention_params, so the maximum is the same score either way).
  const float scale_log2 = p.scale * kLog2e;
  const bool additive = kMask == kAdditiveMask || (kMask == kRowMask && p.mask_kind != kBoolMask);
  const float unit = additive ? 1.0f : scale_log2;  // log2 units per score unit

  // The mask's offset for this (batch, head) and its strides along Lq and Lk (0 where broadcast).
  int64_t mbase = 0, mst_q = 0, mst_k = 0;
  if (kMask != kNoMask) {
    int64_t rem = bh;
    for (int d = p.batch_shape.rank - 1; d >= 0; --d) {
      mbase += (rem % p.batch_shape.d[d]) * p.mask_st[d];
      rem /= p.batch_shape.d[d];
    }
    mst_q = p.mask_st[p.batch_shape.rank];
    mst_k = p.mask_st[p.batch_shape.rank + 1];
  }

  // Key tiles: all of them, or with a causal mask those up to the CTA's last query row.
  int n_tiles = (lk + kFlashKeys - 1) / kFlashKeys;
  if (p.causal) n_tiles = (min(lk, min(lq, q0 + kRows)) + kFlashKeys - 1) / kFlashKeys;

  load_tile<D, kRows, kThreads>(sq, q + p.rows[0].start(bh) + q0 * p.rows[0].row, min(kRows, lq - q0), e,
                                p.rows[0].row, vec);
  cp_async_commit();
  if (n_tiles > 0) {
    load_tile<D, kFlashKeys, kThreads>(sk, kg, min(kFlashKeys, lk), e, ldk, vec);
    load_tile<D, kFlashKeys, kThreads>(sv, vg, min(kFlashKeys, lk), ev, ldv, vec);
  }
  cp_async_commit();
  float* mask_row = reinterpret_cast<float*>(sq + S::kMaskRow);
  const bool row_mask_bool = p.mask_kind == kBoolMask;
  if constexpr (kMask == kRowMask) {
    if (row_mask_bool) {
      stage_mask_row<unsigned char, kThreads>(mask_row, static_cast<const unsigned char*>(mask), mbase, mst_k,
                                              lk);
    } else if (p.mask_dtype == kF16) {
      stage_mask_row<__half, kThreads>(mask_row, static_cast<const __half*>(mask), mbase, mst_k, lk);
    } else if (p.mask_dtype == kBF16) {
      stage_mask_row<__nv_bfloat16, kThreads>(mask_row, static_cast<const __nv_bfloat16*>(mask), mbase, mst_k,
                                              lk);
    } else {
      stage_mask_row<float, kThreads>(mask_row, static_cast<const float*>(mask), mbase, mst_k, lk);
    }
  }
  cp_async_wait<1>();  // the Q tile
  __syncthreads();     // (also the mask row)

  const int warp_row0 = q0 + warp * kWarpRows;  // the warp's first query row
  uint32_t qf[kFrags][D / 16][4];
#pragma unroll
  for (int f = 0; f < kFrags; ++f) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      int row = warp * kWarpRows + f * 16 + ((mat & 1) << 3) + mrow, col = kk * 16 + ((mat >> 1) << 3);
      ldmatrix_x4(qf[f][kk], shared_addr(sq + row * kLd + col));
    }
  }

  float o[kFrags][kNd][4];
  float row_max[kFrags][2], row_sum[kFrags][2];  // row_sum: this lane's part
#pragma unroll
  for (int f = 0; f < kFrags; ++f) {
#pragma unroll
    for (int n = 0; n < kNd; ++n) o[f][n][0] = o[f][n][1] = o[f][n][2] = o[f][n][3] = 0.0f;
    row_max[f][0] = row_max[f][1] = -INFINITY;
    row_sum[f][0] = row_sum[f][1] = 0.0f;
  }

  for (int j = 0; j < n_tiles; ++j) {
    const int buf = j & 1;
    if (j + 1 < n_tiles) {
      const int k1 = (j + 1) * kFlashKeys, rows = min(kFlashKeys, lk - k1);
      load_tile<D, kFlashKeys, kThreads>(sk + (buf ^ 1) * S::kTile, kg + k1 * ldk, rows, e, ldk, vec);
      load_tile<D, kFlashKeys, kThreads>(sv + (buf ^ 1) * S::kTile, vg + k1 * ldv, rows, ev, ldv, vec);
      cp_async_commit();
      cp_async_wait<1>();  // tile j has landed, tile j + 1 is in flight
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const int k0 = j * kFlashKeys;
    // With a causal mask, a warp whose rows all precede the tile's first key has nothing to add from it (it
    // still takes part in the loads and barriers).
    if (!p.causal || k0 <= warp_row0 + kWarpRows - 1) {
      const uint16_t* skb = sk + buf * S::kTile;
      const uint16_t* svb = sv + buf * S::kTile;
      float mk[kFrags][kNk][4];
#pragma unroll
      for (int f = 0; f < kFrags; ++f) {
        const int q_row = warp_row0 + f * 16 + g;
        if constexpr (kMask == kBoolMask) {
          load_mask<kNk>(mk[f], static_cast<const unsigned char*>(mask), mbase, mst_q, mst_k, k0, q_row, t,
                         lq, lk);
        } else if constexpr (kMask == kAdditiveMask) {
          if (p.mask_dtype == kF16) {
            load_mask<kNk>(mk[f], static_cast<const __half*>(mask), mbase, mst_q, mst_k, k0, q_row, t, lq,
                           lk);
          } else if (p.mask_dtype == kBF16) {
            load_mask<kNk>(mk[f], static_cast<const __nv_bfloat16*>(mask), mbase, mst_q, mst_k, k0, q_row, t,
                           lq, lk);
          } else {
            load_mask<kNk>(mk[f], static_cast<const float*>(mask), mbase, mst_q, mst_k, k0, q_row, t, lq, lk);
          }
        }
      }

      // S = Q K^T: kWarpRows rows x kFlashKeys keys per warp, as kNk accumulators of 16x8 per fragment.
      float s[kFrags][kNk][4];
#pragma unroll
      for (int f = 0; f < kFrags; ++f) {
#pragma unroll
        for (int c = 0; c < kNk; ++c) s[f][c][0] = s[f][c][1] = s[f][c][2] = s[f][c][3] = 0.0f;
      }
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
        for (int np = 0; np < kNk / 2; ++np) {
          // Matrices: keys np*16 + 0..7 at dims kk*16 + 0..7 / 8..15, then keys + 8..15 likewise.
          uint32_t b[4];
          int key = np * 16 + ((mat >> 1) << 3) + mrow, col = kk * 16 + ((mat & 1) << 3);
          ldmatrix_x4(b, shared_addr(skb + key * kLd + col));
#pragma unroll
          for (int f = 0; f < kFrags; ++f) {
            Mma<T>::run(s[f][2 * np], qf[f][kk], b[0], b[1]);
            Mma<T>::run(s[f][2 * np + 1], qf[f][kk], b[2], b[3]);
          }
        }
      }

      // Mask, causal / padding, and the tile's row maxima, in the kernel's score units (see unit). A boolean
      // mask drops the score whatever it is (NaN included), an additive one is added to it. Keys past a row
      // (causal) exist in the tile only when its last key is past the warp's first row.
      const bool guard = k0 + kFlashKeys > lk || (p.causal && k0 + kFlashKeys - 1 > warp_row0);
#pragma unroll
      for (int f = 0; f < kFrags; ++f) {
        const int q_row = warp_row0 + f * 16 + g;  // + 8 for c2, c3
        float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int c = 0; c < kNk; ++c) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            float x = s[f][c][i];
            if constexpr (kMask == kBoolMask) {
              x = mk[f][c][i] == -INFINITY ? -INFINITY : x;
            } else if constexpr (kMask == kAdditiveMask) {
              x = fmaf(x, scale_log2, mk[f][c][i]);
            } else if constexpr (kMask == kRowMask) {  // read here: shared memory needs no latency hidden
              const int key = k0 + c * 8 + 2 * t + (i & 1);
              const float m = mask_row[key < lk ? key : 0];  // (a key past Lk is dropped below)
              x = row_mask_bool ? (m == -INFINITY ? -INFINITY : x) : fmaf(x, scale_log2, m);
            }
            if (guard) {
              const int key = k0 + c * 8 + 2 * t + (i & 1), qi = q_row + ((i >> 1) << 3);
              if (key >= lk || (p.causal && key > qi)) x = -INFINITY;
            }
            s[f][c][i] = x;
            tile_max[i >> 1] = fmaxf(tile_max[i >> 1], x);
          }
        }

        // Online softmax: new running max, rescale factor of what was accumulated, probabilities. A row with
        // no unmasked key so far keeps max -inf and subtracts 0 instead (exp2(-inf - -inf) would be NaN).
        float base[2], alpha[2];  // base: the maximum in log2 units
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float mx = fmaxf(row_max[f][h], quad_max(tile_max[h]));
          const float unit_base = mx == -INFINITY ? 0.0f : mx;
          base[h] = unit_base * unit;
          alpha[h] = fast_exp2((row_max[f][h] - unit_base) * unit);
          row_max[f][h] = mx;
          row_sum[f][h] *= alpha[h];
        }
#pragma unroll
        for (int c = 0; c < kNk; ++c) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            s[f][c][i] = fast_exp2(fmaf(s[f][c][i], unit, -base[i >> 1]));
            row_sum[f][i >> 1] += s[f][c][i];
          }
        }
#pragma unroll
        for (int n = 0; n < kNd; ++n) {
          o[f][n][0] *= alpha[0];
          o[f][n][1] *= alpha[0];
          o[f][n][2] *= alpha[1];
          o[f][n][3] *= alpha[1];
        }
      }

      // O += P V: P in the input type straight from the S accumulators (see the file comment).
#pragma unroll
      for (int ks = 0; ks < kNk / 2; ++ks) {
        uint32_t a[kFrags][4];
#pragma unroll
        for (int f = 0; f < kFrags; ++f) {
          a[f][0] = Mma<T>::pack(s[f][2 * ks][0], s[f][2 * ks][1]);
          a[f][1] = Mma<T>::pack(s[f][2 * ks][2], s[f][2 * ks][3]);
          a[f][2] = Mma<T>::pack(s[f][2 * ks + 1][0], s[f][2 * ks + 1][1]);
          a[f][3] = Mma<T>::pack(s[f][2 * ks + 1][2], s[f][2 * ks + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < kNd / 2; ++dp) {
          // Matrices (transposed): keys ks*16 + 0..7 / 8..15 at dims dp*16 + 0..7, then dims + 8..15.
          uint32_t b[4];
          int key = ks * 16 + ((mat & 1) << 3) + mrow, col = dp * 16 + ((mat >> 1) << 3);
          ldmatrix_x4_trans(b, shared_addr(svb + key * kLd + col));
#pragma unroll
          for (int f = 0; f < kFrags; ++f) {
            Mma<T>::run(o[f][2 * dp], a[f], b[0], b[1]);
            Mma<T>::run(o[f][2 * dp + 1], a[f], b[2], b[3]);
          }
        }
      }
    }
    __syncthreads();  // every warp is done with this buffer before it is loaded again
  }
  cp_async_wait<0>();

  // O / l (O itself, 0 x v, where every key was masked: torch's safe softmax; a NaN l stays NaN), staged in
  // the warp's own Q rows (no other warp reads them) and written with 16-byte stores.
  uint16_t* so = sq + warp * kWarpRows * kLd;
#pragma unroll
  for (int f = 0; f < kFrags; ++f) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(row_sum[f][h]);
      const float inv = l == 0.0f ? 1.0f : 1.0f / l;
#pragma unroll
      for (int n = 0; n < kNd; ++n) {
        uint32_t w = Mma<T>::pack(o[f][n][2 * h] * inv, o[f][n][2 * h + 1] * inv);
        *reinterpret_cast<uint32_t*>(so + (f * 16 + g + 8 * h) * kLd + n * 8 + 2 * t) = w;
      }
    }
  }
  __syncwarp();
  const int64_t ldo = p.rows[3].row;
  const int rows = min(kWarpRows, lq - warp_row0);
  if (out8.data) {  // E4M3 codes of the staged (rounded to T) values, as a Reformat of the output would make
    uint8_t* o8 = out8.data + p.rows[3].start(bh) + warp_row0 * ldo;
    const int step = vec ? 8 : 1;
    for (int i = lane * step; i < kWarpRows * D; i += 32 * step) {
      int r = i / D, c = i % D;
      if (r >= rows || c >= ev) continue;
      if (vec) {
        Pack<uint8_t, 8> pk;
#pragma unroll
        for (int j = 0; j < 8; ++j)
          pk.v[j] = to_e4m3(Mma<T>::unpack(so[r * kLd + c + j]) * out8.inverse_scale);
        *reinterpret_cast<Pack<uint8_t, 8>*>(o8 + r * ldo + c) = pk;
      } else {
        o8[r * ldo + c] = to_e4m3(Mma<T>::unpack(so[r * kLd + c]) * out8.inverse_scale);
      }
    }
    return;
  }
  uint16_t* out0 = out + p.rows[3].start(bh) + warp_row0 * ldo;
  if (vec) {
    for (int i = lane; i < kWarpRows * kNd; i += 32) {
      int r = i / kNd, c = (i % kNd) * 8;
      if (r < rows && c < ev) {
        *reinterpret_cast<uint4*>(out0 + r * ldo + c) = *reinterpret_cast<const uint4*>(so + r * kLd + c);
      }
    }
  } else {
    for (int i = lane; i < kWarpRows * D; i += 32) {
      int r = i / D, c = i % D;
      if (r < rows && c < ev) out0[r * ldo + c] = so[r * kLd + c];
    }
  }
#else
  __trap();  // flash_attention_device_ok() keeps devices below sm_80 away
#endif
}

template <typename T, int D, int kMask, typename C>
void launch_masked(const void* q, const void* k, const void* v, const void* mask, void* out, E4m3Out out8,
                   const AttnParams& p, bool vec, Stream stream) {
  const int64_t q_tiles = (p.lq + C::kRows - 1) / C::kRows;
  flash_attention_kernel<T, D, kMask, C>
      <<<static_cast<unsigned>(p.batch * q_tiles), C::kThreads, kSmemBytes<D, C, kMask>, stream>>>(
          static_cast<const uint16_t*>(q), static_cast<const uint16_t*>(k), static_cast<const uint16_t*>(v),
          mask, static_cast<uint16_t*>(out), out8, p, static_cast<int>(q_tiles), vec);
}

template <typename T, int D, typename C>
void launch_typed(const void* q, const void* k, const void* v, const void* mask, void* out, E4m3Out out8,
                  const AttnParams& p, bool vec, Stream stream) {
  if (p.mask_kind == kNoMask) {
    return launch_masked<T, D, kNoMask, C>(q, k, v, mask, out, out8, p, vec, stream);
  }
  if (p.mask_st[p.batch_shape.rank] == 0 && p.lk <= kMaskRowKeys) {
    return launch_masked<T, D, kRowMask, C>(q, k, v, mask, out, out8, p, vec, stream);
  }
  if (p.mask_kind == kBoolMask) {
    return launch_masked<T, D, kBoolMask, C>(q, k, v, mask, out, out8, p, vec, stream);
  }
  launch_masked<T, D, kAdditiveMask, C>(q, k, v, mask, out, out8, p, vec, stream);
}

/// The tall shape exists up to head dim 64 (at 128 its accumulators would not fit in registers);
/// flash_attention_fits_device refuses it above, and a launch there runs the 4-warp shape instead.
template <typename T, typename C>
void launch_dim(const void* q, const void* k, const void* v, const void* mask, void* out, E4m3Out out8,
                const AttnParams& p, bool vec, Stream stream) {
  const int64_t dim = p.e > p.ev ? p.e : p.ev;
  if (dim <= 32) return launch_typed<T, 32, C>(q, k, v, mask, out, out8, p, vec, stream);
  if (dim <= 64) return launch_typed<T, 64, C>(q, k, v, mask, out, out8, p, vec, stream);
  if constexpr (C::kFrags == 1) {
    launch_typed<T, 128, C>(q, k, v, mask, out, out8, p, vec, stream);
  } else {
    launch_typed<T, 128, Cta4>(q, k, v, mask, out, out8, p, vec, stream);
  }
}

template <typename T, int D, int kMask, typename C>
cudaError_t allow_smem_of() {
  return cudaFuncSetAttribute(flash_attention_kernel<T, D, kMask, C>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(kSmemBytes<D, C, kMask>));
}

template <typename T, int D, typename C>
cudaError_t allow_smem() {
  for (cudaError_t e : {allow_smem_of<T, D, kNoMask, C>(), allow_smem_of<T, D, kBoolMask, C>(),
                        allow_smem_of<T, D, kAdditiveMask, C>(), allow_smem_of<T, D, kRowMask, C>()}) {
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

/// allow_smem for both 16-bit types at head dim D.
template <int D, typename C>
cudaError_t allow_smem_both() {
  const cudaError_t e = allow_smem<__half, D, C>();
  return e != cudaSuccess ? e : allow_smem<__nv_bfloat16, D, C>();
}

/// allow_smem_both at every padded head dim up to that of `head_dim` (launch_dim's kernels: a layer whose
/// head dim varies between runs launches the smaller ones too).
template <typename C>
cudaError_t allow_smem_at(int64_t head_dim) {
  cudaError_t e = allow_smem_both<32, C>();
  if (e != cudaSuccess || head_dim <= 32) return e;
  if ((e = allow_smem_both<64, C>()) != cudaSuccess || head_dim <= 64) return e;
  if constexpr (C::kFrags == 1) {
    return allow_smem_both<128, C>();
  } else {
    return allow_smem_both<128, Cta4>();
  }
}

/// The largest dynamic shared memory of the kernels of shape C at the padded head dim of `head_dim` (the
/// kRowMask kernel's); 0 where the shape has no kernel.
template <typename C>
size_t smem_bytes(int64_t head_dim) {
  if (head_dim <= 32) return kSmemBytes<32, C, kRowMask>;
  if (head_dim <= 64) return kSmemBytes<64, C, kRowMask>;
  if constexpr (C::kFrags == 1) {
    return kSmemBytes<128, C, kRowMask>;
  } else {
    return 0;
  }
}

/// Calls f with a value of the Cta type of `shape`.
template <typename F>
auto with_cta(FlashShape shape, F&& f) {
  switch (shape) {
    case FlashShape::k8Warps: return f(Cta8{});
    case FlashShape::k4WarpsTall: return f(Cta4Tall{});
    default: return f(Cta4{});
  }
}

/// Whether every row of an operand starts 16 bytes after a 16-byte aligned base (16-bit elements).
bool rows_aligned16(const AttnRows& r) { return (r.offset | r.outer | r.inner | r.row) % 8 == 0; }

}  // namespace

bool flash_attention_device_ok(const char** why) {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    cudaGetLastError();  // clear the error so that the next launch check does not report it
    *why = "no usable CUDA device";
    return false;
  }
  if (major < 8) {
    *why = "needs compute capability 8.0 or newer (mma.sync bf16, cp.async)";
    return false;
  }
  return true;
}

bool flash_attention_fits_device(FlashShape shape, int64_t head_dim, const char** why) {
  const size_t need = with_cta(shape, [&](auto c) { return smem_bytes<decltype(c)>(head_dim); });
  if (need == 0) {
    *why = "this kernel shape takes head dims up to 64";
    return false;
  }
  int device = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    cudaGetLastError();  // clear the error so that the next launch check does not report it
    *why = "no usable CUDA device";
    return false;
  }
  if (need > static_cast<size_t>(optin)) {
    *why = "the device gives a block less shared memory than this kernel shape needs at this head dim";
    return false;
  }
  return true;
}

int prepare_flash_attention(FlashShape shape, int64_t head_dim) {
  const cudaError_t e = with_cta(shape, [&](auto c) { return allow_smem_at<decltype(c)>(head_dim); });
  if (e != cudaSuccess) cudaGetLastError();  // (the failed attribute call would fail the next launch check)
  return static_cast<int>(e);
}

void launch_flash_attention(const void* q, const void* k, const void* v, const void* mask, void* out,
                            int dtype, const AttnParams& p, Stream stream, E4m3Out out8, FlashShape shape) {
  if (p.batch == 0 || p.lq == 0 || p.ev == 0) return;
  const bool vec = p.e % 8 == 0 && p.ev % 8 == 0 && aligned16(q) && aligned16(k) && aligned16(v) &&
                   aligned16(out) && aligned16(out8.data) && rows_aligned16(p.rows[0]) &&
                   rows_aligned16(p.rows[1]) && rows_aligned16(p.rows[2]) && rows_aligned16(p.rows[3]);
  with_cta(shape, [&](auto c) {
    using C = decltype(c);
    if (dtype == kBF16) return launch_dim<__nv_bfloat16, C>(q, k, v, mask, out, out8, p, vec, stream);
    launch_dim<__half, C>(q, k, v, mask, out, out8, p, vec, stream);
  });
}

}  // namespace kiln::engine::cuda
