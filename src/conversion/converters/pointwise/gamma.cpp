// The digamma function composed of elementwise layers: digamma / special_digamma / special_psi. Being an
// elementwise chain, it fuses into the backends' pointwise kernels (NVRTC on CUDA), which evaluate in float.
//
// digamma(x): x < 0 uses the reflection digamma(x) = digamma(1 - x) - pi / tan(pi r), r the fractional part
// of x (torch does the same); a negative integer gives NaN, +-0 gives -+inf (torch's C++ convention). y < 6
// is shifted by digamma(y) = digamma(y + 6) - sum 1 / (y + k), and digamma(z >= 6) = log z - 1 / (2z) - sum
// B_2k / (2k z^2k) to z^-10 (truncation below 1e-11).

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
  engine::Tensor* less(engine::Tensor* a, double b) const { return bin(o(a), c(b), ElementwiseOp::Less); }
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

bool floating_output(const ir::Node& n, const settings::CompilationSettings&) {
  return is_floating(detail::out_dtype(n));
}

}  // namespace

void register_gamma_converters(ConverterRegistry& r) {
  detail::add(r, {"aten.digamma.default", "aten.special_digamma.default", "aten.special_psi.default"},
              digamma, true, floating_output);
}

}  // namespace kiln::conversion
