// Element reordering along dims: flip and roll, as gathers with a computed index (static or dynamic extents).
// The engine's gather wraps negative indices, so flip gathers [-1, -2, ..., -n] and roll by k gathers
// [0, 1, ..., n - 1] - (k mod n).

#include <algorithm>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/pointwise.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ElementwiseOp;

// start, start + delta, ... with as many elements as dim `dim` of x (Int64).
engine::Tensor* range_along(ConversionContext& ctx, engine::Tensor* x, int64_t dim, int64_t start,
                            int64_t delta) {
  engine::FillParams p;
  p.op = engine::FillParams::Arange;
  p.dtype = DType::Int64;
  p.value = static_cast<double>(start);
  p.delta = static_cast<double>(delta);
  const int64_t n = x->dims()[dim];
  if (n >= 0) {
    p.dims = {n};
    return ctx.net.add_fill(ctx.name("index"), p);
  }
  p.dims = {-1};
  return ctx.net.add_fill(ctx.name("index"), p, impl::dim_of(ctx, x, dim));
}

Outputs flip(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  std::vector<int64_t> dims = a.ints("dims");
  for (int64_t& d : dims) d = impl::normalize_dim(d, x->rank(), ctx.current_node);
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  engine::Tensor* y = x;
  for (int64_t d : dims) y = impl::index_select(ctx, y, d, range_along(ctx, y, d, -1, -1));
  return {y == x ? impl::identity(ctx, x) : y};
}

// Rolls dim `dim` of x by `shift` (static): y[i] = x[(i - shift) mod n].
engine::Tensor* roll_dim(ConversionContext& ctx, engine::Tensor* x, int64_t dim, int64_t shift) {
  engine::Tensor* index = range_along(ctx, x, dim, 0, 1);
  const int64_t n = x->dims()[dim];
  engine::Tensor* offset = nullptr;
  if (n >= 0) {
    const int64_t k = n == 0 ? 0 : ((shift % n) + n) % n;
    if (k == 0) return x;
    offset = impl::int64s(ctx, {k});
  } else {
    offset = impl::sym_int_tensor(
        ctx, impl::sym_int_arith(ctx, SymIntValue{shift, nullptr},
                                 SymIntValue{std::nullopt, impl::dim_of(ctx, x, dim)}, ElementwiseOp::Mod));
  }
  index = ctx.net.add_elementwise(ctx.name("index"), index, offset, ElementwiseOp::Sub);
  return impl::index_select(ctx, x, dim, index);
}

Outputs roll(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const std::vector<int64_t> shifts = a.ints("shifts");
  std::vector<int64_t> dims = a.ints("dims", std::vector<int64_t>{});
  if (dims.empty()) {
    // No dims: the flattened tensor rolls, then takes its shape back.
    KILN_CHECK(shifts.size() == 1, InvalidInput, ctx.current_node, ": roll without dims takes one shift");
    engine::Tensor* flat = impl::flatten(ctx, x, 0, -1);
    return {impl::reshape(ctx, roll_dim(ctx, flat, 0, shifts[0]), impl::dims_of(ctx, x))};
  }
  KILN_CHECK(shifts.size() == dims.size(), InvalidInput, ctx.current_node, ": roll with ", shifts.size(),
             " shifts and ", dims.size(), " dims");
  engine::Tensor* y = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    y = roll_dim(ctx, y, impl::normalize_dim(dims[i], x->rank(), ctx.current_node), shifts[i]);
  }
  return {y == x ? impl::identity(ctx, x) : y};
}

// Shifts known at build time.
bool static_shifts(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* s = n.find_arg("shifts");
  if (s == nullptr) return false;
  if (s->kind() == ir::Argument::Kind::Int || s->kind() == ir::Argument::Kind::Ints) return true;
  if (s->kind() != ir::Argument::Kind::SymInts) return false;
  for (const ir::SymIntArg& v : s->as_sym_ints()) {
    if (!v.is_value()) continue;
    const auto& sv = v.value->sym_value();
    if (!sv || !sv->is_constant()) return false;
  }
  return true;
}

}  // namespace

void register_reorder_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.flip.default"}, flip, true);
  add(r, {"aten.roll.default"}, roll, true, static_shifts);
}

}  // namespace kiln::conversion
