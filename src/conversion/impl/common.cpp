#include "kiln/conversion/impl/common.h"

#include "kiln/support/error.h"

namespace kiln::conversion::impl {

engine::Tensor* constant(ConversionContext& ctx, const HostTensor& value, const std::string& refit_name) {
  if (refit_name.empty()) return ctx.net.add_constant(ctx.name("const"), engine::Weights(value));
  ctx.record_weight(refit_name, value);
  return ctx.net.add_constant(ctx.name("const"), engine::Weights(refit_name, value));
}

engine::Tensor* scalar(ConversionContext& ctx, double value, DType dtype) {
  HostTensor t(dtype, {});
  t.set_from_double(0, value);
  return constant(ctx, t);
}

engine::Tensor* int64s(ConversionContext& ctx, const std::vector<int64_t>& values) {
  return constant(ctx, HostTensor::from_int64s(values, {static_cast<int64_t>(values.size())}));
}

engine::Tensor* cast(ConversionContext& ctx, engine::Tensor* t, DType dtype) {
  if (t->dtype() == dtype) return t;
  return ctx.net.add_cast(ctx.name("cast"), t, dtype);
}

engine::Tensor* identity(ConversionContext& ctx, engine::Tensor* t) {
  return ctx.net.add_shuffle(ctx.name("identity"), t, engine::ShuffleParams{});
}

namespace {

int category(DType d) {
  if (d == DType::Bool) return 0;
  return is_floating(d) ? 2 : 1;
}

int width(DType d) {
  switch (d) {
    case DType::Float64: case DType::Int64: return 8;
    case DType::Float32: case DType::Int32: return 4;
    case DType::Float16: case DType::BFloat16: case DType::Int16: return 2;
    default: return 1;
  }
}

DType promote_same_dimness(DType a, DType b) {
  if (a == b) return a;
  const int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16)) {
    return DType::Float32;
  }
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) return DType::Int16;
  return width(a) >= width(b) ? a : b;
}

}  // namespace

DType promote_types(DType a, int64_t rank_a, DType b, int64_t rank_b) {
  // torch: dimensioned tensors decide the type unless a zero-dim operand is of a higher category.
  const bool za = rank_a == 0, zb = rank_b == 0;
  if (za == zb) return promote_same_dimness(a, b);
  const DType dim_t = za ? b : a, zero_t = za ? a : b;
  if (category(zero_t) > category(dim_t)) return category(zero_t) == 2 && category(dim_t) < 2 ? zero_t : zero_t;
  return dim_t;
}

int64_t normalize_dim(int64_t dim, int64_t rank, const std::string& what) {
  const int64_t r = std::max<int64_t>(rank, 1);
  KILN_CHECK(dim >= -r && dim < r, InvalidInput, what, ": dim ", dim, " out of range for rank ", rank);
  return dim < 0 ? dim + r : dim;
}

}  // namespace kiln::conversion::impl
