#pragma once
// Host-side planning of a strided copy (launch_strided_copy): the copy is simplified before any kernel runs
// so that the kernels do as little index arithmetic per element as possible and touch memory in wide,
// coalesced accesses. Plain C++ (no CUDA headers): unit-tested without a GPU.
//
// Steps: dims of size 1 go; adjacent dims that are contiguous with each other in both input and output
// merge into one; when the innermost dim is contiguous on both sides, groups of elements become one vector
// element of up to 16 bytes (where the base addresses and every stride allow it); when the output's
// innermost dim is strided in the input while another dim is contiguous there (a real transpose), the copy
// goes through shared-memory tiles; offsets that fit select 32-bit index math.

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

/// The widest single access of the vectorized paths, in bytes.
constexpr int kMaxVectorBytes = 16;
/// The side of the square tiles of the tiled path, in elements.
constexpr int kCopyTile = 32;
/// Both tiled dims must have at least this many elements for the tiled path: on thinner shapes most of a
/// tile would idle, and the elementwise path already reads short contiguous runs.
constexpr int64_t kMinTiledExtent = 16;

/// How a planned strided copy runs.
enum class CopyPath : uint8_t {
  kNone,         // nothing to copy
  kElementwise,  // one thread per element (possibly a vector of several tensor elements)
  kTiled,        // shared-memory tiles: dim 0 contiguous in the output, tile_dim in the input
};

/// A strided copy simplified for a kernel. Dims are innermost first (d[0] varies fastest); strides and d are
/// in elements of `elem_size` bytes; the byte offsets are added to the input and output base pointers.
struct CopyPlan {
  CopyPath path = CopyPath::kNone;
  int elem_size = 1;    // 1, 2, 4, 8, or 16 (vectors)
  bool narrow = false;  // every count and offset fits 32-bit index math (index_math.h)
  int rank = 0;
  int tile_dim = 0;  // kTiled: the dim contiguous in the input (> 0)
  int64_t d[kMaxRank] = {}, in_st[kMaxRank] = {}, out_st[kMaxRank] = {};
  int64_t count = 0;
  int64_t in_offset = 0, out_offset = 0;
};

/// Plans out[out_base + sum idx*out_st] = in[in_base + sum idx*in_st] over `shape` (outermost dim first, as
/// launch_strided_copy takes it) for elements of `elem_size` bytes at the given base addresses.
CopyPlan plan_strided_copy(uintptr_t in_addr, int64_t in_base, const int64_t* in_st, uintptr_t out_addr,
                           int64_t out_base, const int64_t* out_st, const Shape& shape, int elem_size);

/// The widest access (a power of two, at most kMaxVectorBytes) that divides every byte quantity OR-ed into
/// `bits` (addresses, row lengths and strides in bytes): its lowest set bit.
int widest_access(uint64_t bits);

}  // namespace kiln::engine::cuda
