#pragma once
// Shape and dtype inference for every layer kind, with validation (each kind's own in
// engine/ops/<family>/<kind>.cpp, dispatched from the kind list). Dims may contain -1 (unknown); when all
// input dims (and the values of shape-tensor inputs) are known the result is exact.

#include <string>
#include <vector>

#include "kiln/engine/network.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine {

/// One layer input as shape inference sees it. `value` is the host value of a shape tensor, when known.
struct ShapeIn {
  DType dtype = DType::Float32;
  Dims dims;
  const HostTensor* value = nullptr;
};

struct ShapeOut {
  DType dtype = DType::Float32;
  Dims dims;
  bool data_dependent = false;  // dims depend on data (nonzero): -1 before execution
};

/// Validates `layer` against its inputs and returns its outputs' dtypes and dims. Throws kiln::Error with
/// a message naming the offending input (the caller adds the layer name).
std::vector<ShapeOut> infer_shapes(const Layer& layer, const std::vector<ShapeIn>& inputs);

/// Index of the first residual (Sum post-op) input of a convolution / matrix multiply layer.
int64_t first_residual_input(const Layer& layer);
/// Number of Sum post-ops.
int64_t count_sum_post_ops(const std::vector<PostOp>& post_ops);

/// Whether every dim is known (>= 0).
bool dims_known(const Dims& dims);
/// Dims as messages print them: "[2, -1, 3]".
std::string dims_str(const Dims& dims);

/// Broadcasts two dims lists (numpy rules, -1 aware); throws when incompatible.
Dims broadcast_dims(const Dims& a, const Dims& b);
/// Normalizes a possibly negative axis for `rank`; throws naming `what` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what);

}  // namespace kiln::engine
