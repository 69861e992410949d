// Tensor factories: arange, full / zeros / ones, full_like / zeros_like / ones_like / zero (the functional
// zero_), scalar_tensor.

#include <cmath>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

// A SymInt argument whose value is only known at run time (nullptr otherwise).
const ir::Value* run_time_sym_int(const ir::Node& n, const char* name) {
  const ir::Argument* a = n.find_arg(name);
  if (a == nullptr || a->kind() != ir::Argument::Kind::SymInt || !a->as_sym_int().is_value()) return nullptr;
  const auto& sv = a->as_sym_int().value->sym_value();
  return sv && sv->is_constant() ? nullptr : a->as_sym_int().value;
}

// arange(start, end, step) with an end only known at run time (torch.arange(seq_len)): integer start and step
// known at build time; the length max(0, ceil((end - start) / step)) is computed on shape tensors.
engine::Tensor* arange_run_time_end(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  using engine::ElementwiseOp;
  const int64_t start = a.raw("start") != nullptr ? a.int_("start") : 0;
  const int64_t step = a.int_("step", 1);
  KILN_CHECK(step != 0, InvalidInput, ctx.current_node, ": arange step 0");
  const SymIntValue end = a.sym_int(ctx, "end");
  const auto c = [](int64_t v) { return SymIntValue{v, nullptr}; };
  // ceil(d / step) = floordiv(d + step - 1, step) for step > 0; for step < 0 negate both.
  const int64_t s = step > 0 ? step : -step;
  SymIntValue span = step > 0 ? impl::sym_int_arith(ctx, end, c(start), ElementwiseOp::Sub)
                              : impl::sym_int_arith(ctx, c(start), end, ElementwiseOp::Sub);
  span = impl::sym_int_arith(ctx, span, c(s - 1), ElementwiseOp::Add);
  SymIntValue count = impl::sym_int_arith(ctx, span, c(s), ElementwiseOp::FloorDiv);
  count = impl::sym_int_arith(ctx, count, c(0), ElementwiseOp::Max);
  engine::FillParams p;
  p.op = engine::FillParams::Arange;
  p.dtype = detail::out_dtype(n);
  p.value = static_cast<double>(start);
  p.delta = static_cast<double>(step);
  if (count.is_static()) {
    p.dims = {*count.value};
    return ctx.net.add_fill(ctx.name("arange"), p);
  }
  p.dims = {-1};
  return ctx.net.add_fill(ctx.name("arange"), p, impl::shape_tensor(ctx, {count}));
}

// A bound as a double (a SymInt bound here has a value known at build time).
double bound(const ConverterArgs& a, const char* name, double fallback) {
  const ir::Argument* v = a.raw(name);
  if (v == nullptr || v->is_none()) return fallback;
  if (v->kind() == ir::Argument::Kind::SymInt) return static_cast<double>(a.int_(name));
  return a.float_(name);
}

Outputs arange(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  if (run_time_sym_int(n, "end") != nullptr) return {arange_run_time_end(ctx, n, a)};
  const double start = bound(a, "start", 0.0);
  const double end = bound(a, "end", 0.0);
  const double step = bound(a, "step", 1.0);
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
  const double value = op == "zeros_like" || op == "zero" ? 0.0 : op == "ones_like" ? 1.0 : a.float_("fill_value");
  return {fill(ctx, impl::dims_of(ctx, a.tensor(ctx, "self")), value, detail::out_dtype(n))};
}

Outputs scalar_tensor(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  return {impl::scalar(ctx, a.float_("s"), detail::out_dtype(n))};
}

// Bounds known at build time, except an end that is a SymInt when start and step are integers (a length
// computed from shapes at run time). SymFloat bounds and run-time starts or steps stay in PyTorch.
bool static_range(const ir::Node& n, const settings::CompilationSettings&) {
  for (const char* k : {"start", "end", "step"}) {
    const ir::Argument* a = n.find_arg(k);
    if (a == nullptr || a->is_none()) continue;
    if (a->kind() == ir::Argument::Kind::SymFloat) return false;
    if (a->kind() != ir::Argument::Kind::SymInt || run_time_sym_int(n, k) == nullptr) continue;
    if (std::string(k) != "end") return false;
    for (const char* other : {"start", "step"}) {
      const ir::Argument* o = n.find_arg(other);
      if (o != nullptr && !o->is_none() && o->kind() != ir::Argument::Kind::Int &&
          (o->kind() != ir::Argument::Kind::SymInt || run_time_sym_int(n, other) != nullptr)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

void register_factory_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.arange.start_step", "aten.arange.default", "aten.arange.start"}, arange, true, static_range);
  add(r, {"aten.full.default", "aten.zeros.default", "aten.ones.default"}, full, true);
  add(r, {"aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default", "aten.zero.default"},
      full_like, true);
  add(r, {"aten.scalar_tensor.default"}, scalar_tensor, true);
}

}  // namespace kiln::conversion
