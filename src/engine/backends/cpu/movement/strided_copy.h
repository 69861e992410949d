#pragma once
// A strided read into a contiguous output, the copy behind the movement kernels (Shuffle, Slice). The copy is
// planned first: dims of size 1 go and dims contiguous with their inner neighbour in the input merge (the
// output is written in order, so it is contiguous throughout); contiguous inner rows are copied with memcpy,
// other rows element by element at the input's stride, typed by element size (1, 2, 4 or 8 bytes, any
// dtype). Large copies split their rows over the pool.

#include <cstdint>
#include <vector>

#include <string>

#include "engine/core/kernel_table.h"

namespace kiln::engine::cpu::fast {

/// out (contiguous, dims `d`) = in read at strides `st` (elements), after merging: d[0] is the innermost dim.
struct CopyPlan {
  std::vector<int64_t> d, st;  // innermost first
  int64_t rows = 0;            // product of d[1..]
};

/// Plans out[i...] = in[sum i_k * strides_k] over `dims` (outermost first; strides in elements, any sign).
CopyPlan plan_copy(const Dims& dims, const std::vector<int64_t>& strides);

/// Runs `plan` for elements of `element_size` bytes (1, 2, 4 or 8): `in` points at the element of index 0.
void strided_copy(const CopyPlan& plan, size_t element_size, const void* in, void* out, ThreadPool* pool);

/// Whether a movement layer's input and output are what strided_copy moves: plain (not blocked) tensors of
/// 1, 2, 4 or 8-byte elements; when not, refuses saying why.
bool strided_copy_applies(const LayerInfo& info, std::string* why);

}  // namespace kiln::engine::cpu::fast
