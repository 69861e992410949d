// Planning of strided copies (strided_copy_plan.h).

#include "engine/backends/cuda/movement/strided_copy_plan.h"

#include "engine/backends/cuda/index_math.h"

namespace kiln::engine::cuda {
namespace {

/// Drops dims of size 1 and merges each dim into its inner neighbour where both input and output step over
/// the neighbour exactly (st[k] == st[inner] * d[inner] on both sides). Leaves plan.count 0 for an empty
/// copy.
void simplify_dims(const int64_t* in_st, const int64_t* out_st, const Shape& shape, CopyPlan& p) {
  p.count = 1;
  for (int k = shape.rank - 1; k >= 0; --k) {
    int64_t n = shape.d[k];
    p.count *= n;
    if (n == 0) return;
    if (n == 1) continue;
    int last = p.rank - 1;
    if (last >= 0 && in_st[k] == p.in_st[last] * p.d[last] && out_st[k] == p.out_st[last] * p.d[last]) {
      p.d[last] *= n;
      continue;
    }
    p.d[p.rank] = n;
    p.in_st[p.rank] = in_st[k];
    p.out_st[p.rank] = out_st[k];
    ++p.rank;
  }
  if (p.rank == 0) {  // a single element
    p.rank = 1;
    p.d[0] = 1;
  }
}

/// Regroups elements into vectors of up to kMaxVectorBytes along dim 0 (contiguous on both sides) where
/// the base addresses, the row length and every outer stride are multiples of the vector size.
void vectorize_inner(uintptr_t in_addr, uintptr_t out_addr, CopyPlan& p) {
  uint64_t es = static_cast<uint64_t>(p.elem_size);
  uint64_t bits = (in_addr + static_cast<uint64_t>(p.in_offset)) |
                  (out_addr + static_cast<uint64_t>(p.out_offset)) | static_cast<uint64_t>(p.d[0]) * es;
  for (int k = 1; k < p.rank; ++k) {
    bits |= static_cast<uint64_t>(p.in_st[k]) * es | static_cast<uint64_t>(p.out_st[k]) * es;
  }
  int width = widest_access(bits);
  if (width <= p.elem_size) return;
  int64_t v = width / p.elem_size;
  p.d[0] /= v;
  for (int k = 1; k < p.rank; ++k) {
    p.in_st[k] /= v;
    p.out_st[k] /= v;
  }
  p.elem_size = width;
}

/// The dim (> 0) that is contiguous in the input when the output's innermost dim is not: a transpose worth
/// tiling; 0 when there is none or the tiles would be mostly idle.
int transposed_dim(const CopyPlan& p) {
  if (p.out_st[0] != 1 || p.in_st[0] == 1 || p.d[0] < kMinTiledExtent) return 0;
  for (int k = 1; k < p.rank; ++k) {
    if (p.in_st[k] == 1) return p.d[k] >= kMinTiledExtent ? k : 0;
  }
  return 0;
}

/// Whether every element offset of the input and of the output lies within 32-bit range.
bool offsets_fit_narrow(const CopyPlan& p) {
  int64_t in_lo = 0, in_hi = 0, out_lo = 0, out_hi = 0;
  for (int k = 0; k < p.rank; ++k) {
    int64_t a = (p.d[k] - 1) * p.in_st[k], b = (p.d[k] - 1) * p.out_st[k];
    (a < 0 ? in_lo : in_hi) += a;
    (b < 0 ? out_lo : out_hi) += b;
  }
  return fits_narrow(p.count, in_lo, in_hi) && fits_narrow(p.count, out_lo, out_hi);
}

}  // namespace

int widest_access(uint64_t bits) {
  uint64_t low = bits & (~bits + 1);
  return low == 0 || low > static_cast<uint64_t>(kMaxVectorBytes) ? kMaxVectorBytes : static_cast<int>(low);
}

CopyPlan plan_strided_copy(uintptr_t in_addr, int64_t in_base, const int64_t* in_st, uintptr_t out_addr,
                           int64_t out_base, const int64_t* out_st, const Shape& shape, int elem_size) {
  CopyPlan p;
  p.elem_size = elem_size;
  simplify_dims(in_st, out_st, shape, p);
  if (p.count == 0) return CopyPlan{};
  p.in_offset = in_base * elem_size;
  p.out_offset = out_base * elem_size;
  p.path = CopyPath::kElementwise;
  if (p.in_st[0] == 1 && p.out_st[0] == 1) {
    vectorize_inner(in_addr, out_addr, p);
    p.count /= p.elem_size / elem_size;
  } else if (int t = transposed_dim(p)) {
    p.path = CopyPath::kTiled;
    p.tile_dim = t;
  }
  p.narrow = offsets_fit_narrow(p);
  return p;
}

}  // namespace kiln::engine::cuda
