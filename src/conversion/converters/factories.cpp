// Tensor factories: arange, full / zeros / ones, full_like / zeros_like / ones_like, scalar_tensor.

#include <cmath>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

Outputs arange(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const bool has_start = a.raw("start") != nullptr;
  const double start = has_start ? a.float_("start") : 0.0;
  const double end = a.float_("end");
  const double step = a.float_("step", 1.0);
  KILN_CHECK(step != 0, InvalidInput, ctx.current_node, ": arange step 0");
  const int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((end - start) / step)));
  engine::FillParams p;
  p.op = engine::FillParams::Arange;
  p.dtype = detail::out_dtype(n);
  p.dims = {count};
  p.value = start;
  p.delta = step;
  return {ctx.net.add_fill(ctx.name("arange"), p)};
}

engine::Tensor* fill(ConversionContext& ctx, const std::vector<SymIntValue>& dims, double value, DType dtype) {
  engine::FillParams p;
  p.op = engine::FillParams::Constant;
  p.dtype = dtype;
  p.value = value;
  if (auto s = impl::static_dims(dims)) {
    p.dims = *s;
    return ctx.net.add_fill(ctx.name("full"), p);
  }
  p.dims.assign(dims.size(), -1);
  return ctx.net.add_fill(ctx.name("full"), p, impl::shape_tensor(ctx, dims));
}

Outputs full(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const std::string& op = n.target().name;
  const double value = op == "zeros" ? 0.0 : op == "ones" ? 1.0 : a.float_("fill_value");
  return {fill(ctx, a.sym_ints(ctx, "size"), value, detail::out_dtype(n))};
}

Outputs full_like(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const std::string& op = n.target().name;
  const double value = op == "zeros_like" ? 0.0 : op == "ones_like" ? 1.0 : a.float_("fill_value");
  return {fill(ctx, impl::dims_of(ctx, a.tensor(ctx, "self")), value, detail::out_dtype(n))};
}

Outputs scalar_tensor(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  return {impl::scalar(ctx, a.float_("s"), detail::out_dtype(n))};
}

// Factories must produce ordinary dense CPU-side values (no pinned memory / sparse layouts matter here).
bool static_range(const ir::Node& n, const compiler::CompilationSettings&) {
  for (const char* k : {"start", "end", "step"}) {
    const ir::Argument* a = n.find_arg(k);
    if (a && (a->kind() == ir::Argument::Kind::SymInt || a->kind() == ir::Argument::Kind::SymFloat) &&
        !a->values().empty()) {
      return false;
    }
  }
  return true;
}

}  // namespace

void register_factory_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.arange.start_step", "aten.arange.default", "aten.arange.start"}, arange, true, static_range);
  add(r, {"aten.full.default", "aten.zeros.default", "aten.ones.default"}, full, true);
  add(r, {"aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default"}, full_like, true);
  add(r, {"aten.scalar_tensor.default"}, scalar_tensor, true);
}

}  // namespace kiln::conversion
