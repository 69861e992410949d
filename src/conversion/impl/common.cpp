#include "kiln/conversion/impl/common.h"

#include "kiln/support/error.h"

namespace kiln::conversion::impl {

engine::Tensor* constant(ConversionContext& ctx, const HostTensor& value, const std::string& refit_name) {
  if (!refit_name.empty()) ctx.record_weight(refit_name, value);
  return ctx.net.add_constant(ctx.name("const"), ctx.weights(refit_name, value));
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

int64_t normalize_dim(int64_t dim, int64_t rank, const std::string& what) {
  const int64_t r = std::max<int64_t>(rank, 1);
  KILN_CHECK(dim >= -r && dim < r, InvalidInput, what, ": dim ", dim, " out of range for rank ", rank);
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> per_spatial_dim(std::vector<int64_t> v, int64_t n, int64_t fill, const std::string& what,
                                     const std::string& node) {
  if (v.empty()) v.assign(n, fill);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  KILN_CHECK(static_cast<int64_t>(v.size()) == n, InvalidInput, node, ": ", what, " has ", v.size(),
             " entries for ", n, " spatial dims");
  return v;
}

}  // namespace kiln::conversion::impl
