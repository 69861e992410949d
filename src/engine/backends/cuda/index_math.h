#pragma once
// Index arithmetic for the data-movement kernels: division by a divisor fixed at launch through a
// precomputed multiplier (32-bit), its 64-bit counterpart, and the choice between them. GPUs have no
// integer divide instruction: a 64-bit division or remainder is a long emulated sequence, a 32-bit one a
// shorter but still costly one, while the multiplier form below is a multiply-high, an add and a shift.
//
// Plain C++ with __host__ __device__ where nvcc compiles it, so that host code and unit tests (g++) can use
// it too.

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define KILN_HD __host__ __device__ __forceinline__
#else
#define KILN_HD inline
#endif

namespace kiln::engine::cuda {

/// Exact quotient n / d for 0 <= n < 2^31 and 1 <= d < 2^31 as (mulhi(n, mul) + n) >> shift, with
/// shift = ceil(log2 d) and mul = floor(2^32 (2^shift - d) / d) + 1 (which fits in 32 bits).
struct FastDiv32 {
  uint32_t d = 1, mul = 1, shift = 0;

  FastDiv32() = default;
  explicit FastDiv32(int64_t divisor) : d(static_cast<uint32_t>(divisor < 1 ? 1 : divisor)) {
    while ((uint64_t{1} << shift) < d) ++shift;
    mul = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  KILN_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    uint32_t hi = __umulhi(n, mul);
#else
    uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * mul) >> 32);
#endif
    return (hi + n) >> shift;
  }
};

/// Plain 64-bit division, for shapes too large for 32-bit index math.
struct Div64 {
  int64_t d = 1;

  Div64() = default;
  explicit Div64(int64_t divisor) : d(divisor) {}
  KILN_HD int64_t div(int64_t n) const { return n / d; }
};

/// The types of one index width: `Linear` counts elements, `Offset` is a signed element offset (strides may
/// be negative), `Div` divides a Linear by a fixed divisor. Narrow (32-bit) when every count and offset of
/// a launch lies below 2^31 (see fits_narrow).
template <bool kNarrow>
struct IndexKind {
  using Linear = std::conditional_t<kNarrow, uint32_t, int64_t>;
  using Offset = std::conditional_t<kNarrow, int32_t, int64_t>;
  using Div = std::conditional_t<kNarrow, FastDiv32, Div64>;
};

/// The largest count or absolute offset the narrow index kind handles.
constexpr int64_t kNarrowLimit = (int64_t{1} << 31) - 1;

/// Whether a launch over `count` elements whose offsets stay within [lo, hi] can use 32-bit index math.
inline bool fits_narrow(int64_t count, int64_t lo, int64_t hi) {
  return count <= kNarrowLimit && lo >= -kNarrowLimit && hi <= kNarrowLimit;
}

/// Calls f(std::true_type{}) for 32-bit index math, else f(std::false_type{}).
template <typename F>
void with_index_kind(bool narrow, F&& f) {
  if (narrow) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

}  // namespace kiln::engine::cuda
