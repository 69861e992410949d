#pragma once
// A small node builder for decompositions: emits ops before one node, with output metadata computed from
// the inputs (broadcasting, reductions, permutations) and every argument in schema order.

#include <string>
#include <vector>

#include "../rewrite.h"

namespace kiln::lowering::detail {

class Builder {
 public:
  Builder(ir::Graph& graph, ir::Node* before) : graph_(graph), before_(before) {}

  ir::Graph& graph() { return graph_; }
  ir::Node* before() { return before_; }

  /// A Scalar argument: an Int when `dtype` is integral (or bool) and `value` is whole, else a Float.
  static ir::Argument scalar(double value, DType dtype);

  /// target(self) with the meta of `self` (sigmoid, tanh, log, sqrt, ...).
  ir::Value* unary(const std::string& target, ir::Value* self);
  /// target(self, other) for Tensor overloads with broadcast sizes and self's dtype (mul.Tensor, div.Tensor).
  ir::Value* binary(const std::string& target, ir::Value* self, ir::Value* other);
  /// add.Tensor / sub.Tensor with alpha.
  ir::Value* add(ir::Value* self, ir::Value* other, double alpha = 1.0);
  ir::Value* sub(ir::Value* self, ir::Value* other, double alpha = 1.0);
  ir::Value* mul(ir::Value* self, ir::Value* other) { return binary("aten.mul.Tensor", self, other); }
  ir::Value* div(ir::Value* self, ir::Value* other) { return binary("aten.div.Tensor", self, other); }
  /// add.Scalar / mul.Scalar / div.Scalar.
  ir::Value* add_scalar(ir::Value* self, double other);
  ir::Value* mul_scalar(ir::Value* self, double other);
  ir::Value* div_scalar(ir::Value* self, double other);
  /// clamp.default(self, min, max); nullopt bounds are None.
  ir::Value* clamp(ir::Value* self, std::optional<double> min, std::optional<double> max);
  /// permute.default(self, dims).
  ir::Value* permute(ir::Value* self, const std::vector<int64_t>& dims);
  /// unsqueeze.default(self, dim) (dim already normalized).
  ir::Value* unsqueeze(ir::Value* self, int64_t dim);
  /// slice.Tensor(self, dim, start, end, 1) with static bounds.
  ir::Value* slice(ir::Value* self, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
  /// select.int(self, dim, index).
  ir::Value* select(ir::Value* self, int64_t dim, int64_t index);
  /// mean.dim / sum.dim_IntList over dims (normalized).
  ir::Value* reduce(const std::string& target, ir::Value* self, const std::vector<int64_t>& dims, bool keepdim);
  /// where.self(condition, self, other) with `meta`.
  ir::Value* where(ir::Value* condition, ir::Value* self, ir::Value* other, const ir::TensorMeta& meta);
  /// Any op with explicit args and meta.
  ir::Value* op(const std::string& target, std::vector<ir::NamedArgument> args, ir::TensorMeta meta,
                const std::string& base);

 private:
  static std::string base_of(const std::string& target);
  ir::Graph& graph_;
  ir::Node* before_;
};

}  // namespace kiln::lowering::detail
