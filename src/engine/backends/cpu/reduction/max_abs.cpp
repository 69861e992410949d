#include "engine/backends/cpu/reduction/max_abs.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

#include "engine/backends/cpu/vec_math.h"  // KILN_SIMD_CLONES
#include "engine/ops/common.h"

namespace kiln::engine::cpu::fast {
namespace {

constexpr uint32_t kMagnitudeBits = 0x7fffffffu, kInfinityBits = 0x7f800000u;

typedef uint32_t Bits __attribute__((vector_size(32)));

/// The largest sign-cleared bit pattern of v[0, n): two 8-lane accumulators (vpand + vpmaxud). 32-byte GCC
/// vectors: a 64-byte one is spilled to the stack every iteration in the AVX2 clone (0.7 ns a float, 0.1 now).
KILN_SIMD_CLONES
uint32_t max_magnitude_bits(const float* v, int64_t n) {
  const Bits mask = kMagnitudeBits - Bits{};
  Bits acc0 = {}, acc1 = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    Bits b0, b1;
    std::memcpy(&b0, v + i, sizeof(b0));
    std::memcpy(&b1, v + i + 8, sizeof(b1));
    b0 &= mask;
    b1 &= mask;
    acc0 = b0 > acc0 ? b0 : acc0;
    acc1 = b1 > acc1 ? b1 : acc1;
  }
  acc0 = acc1 > acc0 ? acc1 : acc0;
  uint32_t out = 0;
  for (int l = 0; l < 8; ++l) out = std::max(out, acc0[l]);
  for (; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, v + i, sizeof(b));
    out = std::max(out, b & kMagnitudeBits);
  }
  return out;
}

}  // namespace

float max_abs_or_inf(const float* v, int64_t n, ThreadPool* pool) {
  constexpr int64_t kGrain = 1 << 16;  // about 10 us of scanning per task
  std::atomic<uint32_t> result{0};
  ops::parallel(n > kGrain ? pool : nullptr, n, kGrain, [&](int64_t begin, int64_t end) {
    const uint32_t m = max_magnitude_bits(v + begin, end - begin);
    uint32_t seen = result.load(std::memory_order_relaxed);
    while (m > seen && !result.compare_exchange_weak(seen, m, std::memory_order_relaxed)) {
    }
  });
  const uint32_t bits = result.load();
  if (bits >= kInfinityBits) return std::numeric_limits<float>::infinity();
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

}  // namespace kiln::engine::cpu::fast
