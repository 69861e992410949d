#pragma once
// Checks and computations that the shape inference of several layer kinds shares (engine/ops/<family>/*.cpp).

#include <optional>
#include <vector>

#include "engine/ops/shape_inference.h"

namespace kiln::engine::ops {

/// A dimension known only at run time.
inline constexpr int64_t kUnknown = -1;

/// Throws unless `in` is floating point, naming it `what`.
void check_float(const ShapeIn& in, const char* what);
/// Reads a 1-D (or scalar) integer shape-tensor value, or nullopt when unknown.
std::optional<std::vector<int64_t>> shape_value(const ShapeIn& in, const char* what);
/// Length of a 1-D shape tensor (-1 when dynamic).
int64_t shape_length(const ShapeIn& in);
/// Output spatial dims of a sliding window (convolution, pooling) over spatial dims `in`.
Dims conv_like_out(const Dims& in, const std::vector<int64_t>& k, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& pre, const std::vector<int64_t>& post,
                   const std::vector<int64_t>& dil, bool ceil_mode);
/// Fills an empty per-spatial-dim vector with `value`; throws unless it then has `n` entries.
void fill_default(std::vector<int64_t>& v, size_t n, int64_t value, const char* what);
/// Checks the residual inputs of a convolution / matrix multiply's Sum post-ops against its output.
void check_post_ops(const Layer& layer, const std::vector<PostOp>& post_ops, const std::vector<ShapeIn>& in,
                    const Dims& out, DType dtype);

}  // namespace kiln::engine::ops
