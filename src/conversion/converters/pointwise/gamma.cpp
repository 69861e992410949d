// The digamma and log-gamma functions composed of elementwise layers: digamma / special_digamma /
// special_psi, lgamma / special_gammaln. Being elementwise chains, they fuse into the backends' pointwise
// kernels (NVRTC on CUDA), which evaluate in float.
//
// digamma(x): x < 0 uses the reflection digamma(x) = digamma(1 - x) - pi / tan(pi r), r the fractional part
// of x (torch does the same); a negative integer gives NaN, +-0 gives -+inf (torch's C++ convention). y < 6
// is shifted by digamma(y) = digamma(y + 6) - sum 1 / (y + k), and digamma(z >= 6) = log z - 1 / (2z) - sum
// B_2k / (2k z^2k) to z^-10 (truncation below 1e-11).
//
// lgamma(x) = log |Gamma(x)|: y < 6 is shifted by lgamma(y) = lgamma(y + 6) - log(y (y + 1) ... (y + 5)), and
// lgamma(z >= 6) is Stirling's series (z - 1/2)(log z - 1) - 1/2 + log(2 pi) / 2 + sum B_2k / (2k (2k - 1)
// z^(2k-1)) to z^-7; the series alternates and its remainder is below the first omitted term, 1 / (1188 z^9)
// <= 8.4e-11 at z = 6, far below float's rounding of a result of magnitude >= lgamma(6) = 4.79 (ulp 4.8e-7).
// Writing (z - 1/2) log z - z as (z - 1/2)(log z - 1) - 1/2 keeps it finite as long as the result is (no
// z log z overflow below x ~ 4e36). x < 0 uses the reflection lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 -
// x), with |sin(pi x)| = sin(pi b), b = min(|r|, 1 - |r|) in [0, 1/2] from the exact fractional part r of x,
// so that neither side of a pole loses the sine's relative precision to the rounding of pi x; log pi - log
// sin keeps pi / sin from overflowing for subnormal x. Torch's conventions: non-positive integers and -inf
// (poles) give +inf, +inf gives +inf, NaN stays NaN. Half and bfloat16 inputs are evaluated in float and
// rounded once at the end, as torch does.

#include <cmath>
#include <limits>
#include <numbers>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/pointwise.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ElementwiseOp;
using engine::UnaryOp;
using impl::Operand;

// Terse elementwise arithmetic in one floating type.
struct Math {
  ConversionContext& ctx;
  DType t;
  engine::Tensor* bin(const Operand& a, const Operand& b, ElementwiseOp op) const {
    return impl::binary(ctx, a, b, op, t);
  }
  static Operand c(double v) { return Operand::of(v, true); }
  static Operand o(engine::Tensor* x) { return Operand::of(x); }
  engine::Tensor* add(engine::Tensor* a, double b) const { return bin(o(a), c(b), ElementwiseOp::Add); }
  engine::Tensor* add(engine::Tensor* a, engine::Tensor* b) const {
    return bin(o(a), o(b), ElementwiseOp::Add);
  }
  engine::Tensor* sub(engine::Tensor* a, engine::Tensor* b) const {
    return bin(o(a), o(b), ElementwiseOp::Sub);
  }
  engine::Tensor* rsub(double a, engine::Tensor* b) const { return bin(c(a), o(b), ElementwiseOp::Sub); }
  engine::Tensor* mul(engine::Tensor* a, engine::Tensor* b) const {
    return bin(o(a), o(b), ElementwiseOp::Mul);
  }
  engine::Tensor* mul(engine::Tensor* a, double b) const { return bin(o(a), c(b), ElementwiseOp::Mul); }
  engine::Tensor* div(double a, engine::Tensor* b) const { return bin(c(a), o(b), ElementwiseOp::Div); }
  engine::Tensor* min(engine::Tensor* a, engine::Tensor* b) const {
    return bin(o(a), o(b), ElementwiseOp::Min);
  }
  engine::Tensor* less(engine::Tensor* a, double b) const { return bin(o(a), c(b), ElementwiseOp::Less); }
  engine::Tensor* less_equal(engine::Tensor* a, double b) const {
    return bin(o(a), c(b), ElementwiseOp::LessEqual);
  }
  engine::Tensor* eq(engine::Tensor* a, engine::Tensor* b) const {
    return bin(o(a), o(b), ElementwiseOp::Equal);
  }
  engine::Tensor* eq(engine::Tensor* a, double b) const { return bin(o(a), c(b), ElementwiseOp::Equal); }
  engine::Tensor* both(engine::Tensor* a, engine::Tensor* b) const {
    return impl::binary(ctx, o(a), o(b), ElementwiseOp::And);
  }
  engine::Tensor* un(engine::Tensor* a, UnaryOp op) const { return impl::unary(ctx, a, op, false); }
  engine::Tensor* where(engine::Tensor* cond, const Operand& a, const Operand& b) const {
    return impl::where(ctx, cond, a, b);
  }
  // sum c[i] * r^(2i) ... by Horner: ((c[n-1] r2 + c[n-2]) r2 + ...) + c[0].
  engine::Tensor* series(engine::Tensor* r2, const std::vector<double>& coefficients) const {
    engine::Tensor* p = mul(r2, coefficients.back());
    for (size_t i = coefficients.size() - 1; i-- > 0;) {
      p = add(p, coefficients[i]);
      if (i > 0) p = mul(p, r2);
    }
    return p;
  }
};

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();

// digamma(y) for y > 0.
engine::Tensor* digamma_right(const Math& m, engine::Tensor* y) {
  engine::Tensor* small = m.less(y, 6.0);
  engine::Tensor* recips = nullptr;
  for (int k = 0; k < 6; ++k) {
    engine::Tensor* r = m.div(1.0, m.add(y, k));
    recips = recips == nullptr ? r : m.add(recips, r);
  }
  engine::Tensor* z = m.where(small, Math::o(m.add(y, 6.0)), Math::o(y));
  engine::Tensor* r = m.div(1.0, z);
  engine::Tensor* r2 = m.mul(r, r);
  // log z - 1/(2z) - (1/(12 z^2) - 1/(120 z^4) + 1/(252 z^6) - 1/(240 z^8) + 1/(132 z^10))
  engine::Tensor* tail = m.mul(m.series(r2, {1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132}), r2);
  engine::Tensor* psi = m.sub(m.sub(m.un(z, UnaryOp::Log), m.mul(r, 0.5)), tail);
  return m.sub(psi, m.where(small, Math::o(recips), Math::c(0.0)));
}

Outputs digamma(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const Math m{ctx, detail::out_dtype(n)};
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), m.t);
  engine::Tensor* negative = m.less(x, 0.0);
  engine::Tensor* right = digamma_right(m, m.where(negative, Math::o(m.rsub(1.0, x)), Math::o(x)));
  // x < 0: r = x - trunc(x) = x - ceil(x), in (-1, 0].
  engine::Tensor* r = m.sub(x, m.un(x, UnaryOp::Ceil));
  engine::Tensor* reflected = m.sub(right, m.div(kPi, m.un(m.mul(r, kPi), UnaryOp::Tan)));
  engine::Tensor* result = m.where(negative, Math::o(reflected), Math::o(right));
  engine::Tensor* negative_integer = m.both(negative, m.eq(r, 0.0));
  result = m.where(negative_integer, Math::c(std::numeric_limits<double>::quiet_NaN()), Math::o(result));
  // +0 gives -inf, -0 gives +inf: the sign of 1/x tells them apart.
  engine::Tensor* zero_pole = m.where(m.less(m.div(1.0, x), 0.0), Math::c(kInf), Math::c(-kInf));
  return {m.where(m.eq(x, 0.0), Math::o(zero_pole), Math::o(result))};
}

// lgamma(y) for y >= 0 (+inf at 0).
engine::Tensor* lgamma_right(const Math& m, engine::Tensor* y) {
  engine::Tensor* small = m.less(y, 6.0);
  engine::Tensor* product = y;
  for (int k = 1; k < 6; ++k) product = m.mul(product, m.add(y, k));
  engine::Tensor* z = m.where(small, Math::o(m.add(y, 6.0)), Math::o(y));
  engine::Tensor* r = m.div(1.0, z);
  // (z - 1/2)(log z - 1) - 1/2 + log(2 pi) / 2 + 1/(12 z) - 1/(360 z^3) + 1/(1260 z^5) - 1/(1680 z^7)
  engine::Tensor* tail = m.mul(m.series(m.mul(r, r), {1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680}), r);
  engine::Tensor* stirling =
      m.add(m.mul(m.add(z, -0.5), m.add(m.un(z, UnaryOp::Log), -1.0)), 0.5 * std::log(2 * kPi) - 0.5);
  engine::Tensor* shift = m.where(small, Math::o(m.un(product, UnaryOp::Log)), Math::c(0.0));
  return m.sub(m.add(stirling, tail), shift);
}

Outputs lgamma(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const DType out = detail::out_dtype(n);
  const Math m{ctx, out == DType::Float64 ? DType::Float64 : DType::Float32};
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), m.t);
  engine::Tensor* negative = m.less(x, 0.0);
  engine::Tensor* right = lgamma_right(m, m.where(negative, Math::o(m.rsub(1.0, x)), Math::o(x)));
  // x < 0: |sin(pi x)| = sin(pi b), b = min(|r|, 1 - |r|), r = x - ceil(x) in (-1, 0] (exact).
  engine::Tensor* fraction = m.un(m.sub(x, m.un(x, UnaryOp::Ceil)), UnaryOp::Abs);
  engine::Tensor* b = m.min(fraction, m.rsub(1.0, fraction));
  engine::Tensor* log_sin = m.un(m.un(m.mul(b, kPi), UnaryOp::Sin), UnaryOp::Log);
  engine::Tensor* reflected = m.rsub(std::log(kPi), m.add(log_sin, right));
  engine::Tensor* result = m.where(negative, Math::o(reflected), Math::o(right));
  // Poles: 0, -0, the negative integers and -inf (ceil(-inf) = -inf).
  engine::Tensor* pole = m.both(m.less_equal(x, 0.0), m.eq(x, m.un(x, UnaryOp::Ceil)));
  return {impl::cast(ctx, m.where(pole, Math::c(kInf), Math::o(result)), out)};
}

}  // namespace

void register_gamma_converters(ConverterRegistry& r) {
  detail::add(r, {"aten.digamma.default", "aten.special_digamma.default", "aten.special_psi.default"},
              digamma, true, detail::floating_output);
  detail::add(r, {"aten.lgamma.default", "aten.special_gammaln.default"}, lgamma, true,
              detail::floating_output);
}

}  // namespace kiln::conversion
