// Special functions composed of elementwise layers: erfinv.
//
// erfinv(x) = x * P(w) with w = -log((1 - x)(1 + x)): a polynomial in w - 2.5 where w < 5 (|x| < ~0.9966) and
// in sqrt(w) - 3 beyond (M. Giles, "Approximating the erfinv function", GPU Computing Gems, 2010; relative
// error below 4e-7 in single precision); erfinv(+-1) = +-inf, |x| > 1 gives NaN (the log of a negative
// number).

#include <cmath>
#include <limits>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/pointwise.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ElementwiseOp;
using impl::Operand;

// Horner's rule: c[0] * w^(n-1) + ... + c[n-1].
engine::Tensor* polynomial(ConversionContext& ctx, engine::Tensor* w, const std::vector<double>& c, DType t) {
  engine::Tensor* p = impl::binary(ctx, Operand::of(w), Operand::of(c[0], true), ElementwiseOp::Mul, t);
  for (size_t i = 1; i < c.size(); ++i) {
    p = impl::binary(ctx, Operand::of(p), Operand::of(c[i], true), ElementwiseOp::Add, t);
    if (i + 1 < c.size()) p = impl::binary(ctx, Operand::of(p), Operand::of(w), ElementwiseOp::Mul, t);
  }
  return p;
}

Outputs erfinv(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const DType t = detail::out_dtype(n);
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), t);
  auto bin = [&](const Operand& l, const Operand& r, ElementwiseOp op) {
    return impl::binary(ctx, l, r, op, t);
  };
  auto c = [](double v) { return Operand::of(v, true); };
  engine::Tensor* one_minus = bin(c(1.0), Operand::of(x), ElementwiseOp::Sub);
  engine::Tensor* one_plus = bin(c(1.0), Operand::of(x), ElementwiseOp::Add);
  engine::Tensor* w = impl::unary(ctx, bin(Operand::of(one_minus), Operand::of(one_plus), ElementwiseOp::Mul),
                                  engine::UnaryOp::Log, false);
  w = impl::unary(ctx, w, engine::UnaryOp::Neg, false);
  engine::Tensor* central =
      polynomial(ctx, bin(Operand::of(w), c(2.5), ElementwiseOp::Sub),
                 {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941},
                 t);
  engine::Tensor* tail_w =
      bin(Operand::of(impl::unary(ctx, w, engine::UnaryOp::Sqrt, false)), c(3.0), ElementwiseOp::Sub);
  engine::Tensor* tail = polynomial(ctx, tail_w,
                                    {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                                     0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682},
                                    t);
  engine::Tensor* in_center = bin(Operand::of(w), c(5.0), ElementwiseOp::Less);
  engine::Tensor* p = impl::where(ctx, in_center, Operand::of(central), Operand::of(tail));
  engine::Tensor* y = bin(Operand::of(p), Operand::of(x), ElementwiseOp::Mul);
  // +-1: +-inf (the tail polynomial of an infinite w has the wrong sign).
  engine::Tensor* edge =
      bin(Operand::of(impl::unary(ctx, x, engine::UnaryOp::Abs, false)), c(1.0), ElementwiseOp::Equal);
  engine::Tensor* inf = bin(Operand::of(x), c(std::numeric_limits<double>::infinity()), ElementwiseOp::Mul);
  return {impl::where(ctx, edge, Operand::of(inf), Operand::of(y))};
}

}  // namespace

void register_special_converters(ConverterRegistry& r) {
  detail::add(r, {"aten.erfinv.default"}, erfinv, true, detail::floating_output);
}

}  // namespace kiln::conversion
