// Vector norms: linalg_vector_norm and the norm overloads (p = 2, 1, inf, -inf, 0 and any other p; over some
// dims or all; keepdim; dtype).
//
// Finite p != 0 is computed scaled by the largest magnitude m: ||x||_p = m * (sum (|x| / m)^p)^(1/p). Every
// intermediate is then at most the element count (|x| / m <= 1), so an fp16 or bf16 engine neither overflows
// (sum x^2 passes 65504 for 256 elements of magnitude 16) nor loses the small terms, and the reductions
// accumulate in fp32 on every backend; the result overflows only where the norm itself does. m = 0 (all
// zeros) divides by 1 instead; m = inf gives inf, as torch does.

#include <cmath>
#include <limits>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/pointwise.h"
#include "kiln/conversion/impl/reduction.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ElementwiseOp;
using engine::ReduceOp;
using impl::Operand;

// ||x||_p over `dims` (empty: all dims) of a floating x.
engine::Tensor* vector_norm(ConversionContext& ctx, engine::Tensor* x, double p, std::vector<int64_t> dims,
                            bool keep) {
  const DType t = x->dtype();
  if (x->rank() == 0) {
    x = impl::reshape(ctx, x, {SymIntValue{1, nullptr}});
    dims = {0};
    keep = false;
  }
  if (dims.empty()) {
    for (int64_t i = 0; i < x->rank(); ++i) dims.push_back(i);
  }
  for (int64_t& d : dims) d = impl::normalize_dim(d, x->rank(), ctx.current_node);
  engine::Tensor* mag = impl::unary(ctx, x, engine::UnaryOp::Abs, false);
  if (std::isinf(p)) return impl::reduce(ctx, mag, p > 0 ? ReduceOp::Max : ReduceOp::Min, dims, keep);
  if (p == 0) {
    engine::Tensor* nonzero =
        impl::binary(ctx, Operand::of(x), Operand::of(0.0, true), ElementwiseOp::NotEqual);
    return impl::reduce(ctx, impl::cast(ctx, nonzero, t), ReduceOp::Sum, dims, keep);
  }
  engine::Tensor* m = impl::reduce(ctx, mag, ReduceOp::Max, dims, true);
  engine::Tensor* zero = impl::binary(ctx, Operand::of(m), Operand::of(0.0, true), ElementwiseOp::Equal);
  engine::Tensor* divisor = impl::where(ctx, zero, Operand::of(1.0, true), Operand::of(m));
  engine::Tensor* scaled = impl::binary(ctx, Operand::of(mag), Operand::of(divisor), ElementwiseOp::Div, t);
  engine::Tensor* powered = scaled;
  if (p == 2) {
    powered = impl::binary(ctx, Operand::of(scaled), Operand::of(scaled), ElementwiseOp::Mul, t);
  } else if (p != 1) {
    powered = impl::binary(ctx, Operand::of(scaled), Operand::of(p, true), ElementwiseOp::Pow, t);
  }
  engine::Tensor* sum = impl::reduce(ctx, powered, ReduceOp::Sum, dims, keep);
  engine::Tensor* root = sum;
  if (p == 2) {
    root = impl::unary(ctx, sum, engine::UnaryOp::Sqrt, false);
  } else if (p != 1) {
    root = impl::binary(ctx, Operand::of(sum), Operand::of(1.0 / p, true), ElementwiseOp::Pow, t);
  }
  if (!keep) m = impl::squeeze(ctx, m, dims);
  engine::Tensor* norm = impl::binary(ctx, Operand::of(m), Operand::of(root), ElementwiseOp::Mul, t);
  engine::Tensor* inf = impl::unary(ctx, m, engine::UnaryOp::IsInf, false);
  return impl::where(ctx, inf, Operand::of(m), Operand::of(norm));
}

// The order argument: `ord` (linalg_vector_norm) or `p` (norm; None means 2).
double order(const ConverterArgs& a) {
  return a.raw("ord") != nullptr ? a.float_("ord", 2.0) : a.float_("p", 2.0);
}

std::vector<int64_t> dims_of_arg(const ConverterArgs& a) {
  const ir::Argument* d = a.raw("dim");
  if (d == nullptr || d->is_none()) return {};
  return a.ints("dim");
}

Outputs norm(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), detail::out_dtype(n));
  return {vector_norm(ctx, x, order(a), dims_of_arg(a), a.bool_("keepdim", false))};
}

// Floating inputs and a Scalar order known at build time (integer inputs are an error in torch).
bool floating_input(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* x = n.find_arg("self");
  if (x == nullptr || x->kind() != ir::Argument::Kind::Tensor || !is_floating(x->as_tensor()->meta().dtype)) {
    return false;
  }
  for (const char* k : {"ord", "p"}) {
    const ir::Argument* p = n.find_arg(k);
    if (p != nullptr && !p->is_none() && p->kind() != ir::Argument::Kind::Float &&
        p->kind() != ir::Argument::Kind::Int) {
      return false;
    }
  }
  return is_floating(detail::out_dtype(n));
}

}  // namespace

void register_norm_converters(ConverterRegistry& r) {
  detail::add(r,
              {"aten.linalg_vector_norm.default", "aten.norm.Scalar", "aten.norm.ScalarOpt_dim",
               "aten.norm.ScalarOpt_dim_dtype", "aten.norm.ScalarOpt_dtype"},
              norm, true, floating_input);
}

}  // namespace kiln::conversion
