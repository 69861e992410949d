#pragma once
// Shape arithmetic: run-time dims as 1-element Int64 shape tensors, symbolic expressions evaluated on them, and
// target shapes for reshapes built from static and dynamic parts.

#include <cstdint>
#include <vector>

#include "kiln/conversion/conversion_context.h"
#include "kiln/conversion/converter_args.h"
#include "kiln/ir/sym_expr.h"

namespace kiln::conversion::impl {

/// The 1-D Int64 shape of `t`.
engine::Tensor* shape_of(ConversionContext& ctx, engine::Tensor* t);
/// Dim `dim` of `t` as an Int64 [1] tensor (a constant when static).
engine::Tensor* dim_of(ConversionContext& ctx, engine::Tensor* t, int64_t dim);
/// Every dim of `t` (static dims as values, dynamic ones as shape tensors).
std::vector<SymIntValue> dims_of(ConversionContext& ctx, engine::Tensor* t);
/// A symbolic expression as an Int64 [1] tensor, reading symbols from the context's symbol sources
/// (Add, Mul, FloorDiv, Mod, Max, Min, Pow with a constant exponent). Throws kiln::Error(Unsupported) naming the
/// symbol when a symbol has no source.
engine::Tensor* sym_expr_tensor(ConversionContext& ctx, const ir::SymExpr& expr);
/// A SymIntValue as an Int64 [1] tensor.
engine::Tensor* sym_int_tensor(ConversionContext& ctx, const SymIntValue& v);
/// Binary arithmetic on SymIntValues (static when both are): op is Add, Sub, Mul, FloorDiv, Mod, Max or Min.
SymIntValue sym_int_arith(ConversionContext& ctx, const SymIntValue& a, const SymIntValue& b, engine::ElementwiseOp op);
/// A 1-D Int64 shape tensor from per-dim values (nullptr when every value is static: use `static_dims`).
engine::Tensor* shape_tensor(ConversionContext& ctx, const std::vector<SymIntValue>& dims);
/// The static values when all are static.
std::optional<std::vector<int64_t>> static_dims(const std::vector<SymIntValue>& dims);

}  // namespace kiln::conversion::impl
