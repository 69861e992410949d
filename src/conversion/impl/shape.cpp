#include "kiln/conversion/impl/shape.h"

#include "kiln/conversion/impl/common.h"
#include "kiln/support/error.h"

namespace kiln::conversion::impl {

using engine::ElementwiseOp;

engine::Tensor* shape_of(ConversionContext& ctx, engine::Tensor* t) { return ctx.net.add_shape(ctx.name("shape"), t); }

engine::Tensor* dim_of(ConversionContext& ctx, engine::Tensor* t, int64_t dim) {
  dim = normalize_dim(dim, t->rank(), "dim_of");
  if (t->dims()[dim] >= 0) return int64s(ctx, {t->dims()[dim]});
  return ctx.net.add_slice(ctx.name("dim"), shape_of(ctx, t), engine::SliceParams{{dim}, {1}, {1}});
}

std::vector<SymIntValue> dims_of(ConversionContext& ctx, engine::Tensor* t) {
  std::vector<SymIntValue> out;
  for (int64_t i = 0; i < t->rank(); ++i) {
    if (t->dims()[i] >= 0) {
      out.push_back(SymIntValue{t->dims()[i], nullptr});
    } else {
      out.push_back(SymIntValue{std::nullopt, dim_of(ctx, t, i)});
    }
  }
  return out;
}

namespace {

engine::Tensor* fold(ConversionContext& ctx, const std::vector<ir::SymExpr>& ops, ElementwiseOp op) {
  engine::Tensor* acc = sym_expr_tensor(ctx, ops.at(0));
  for (size_t i = 1; i < ops.size(); ++i) {
    acc = ctx.net.add_elementwise(ctx.name("sym"), acc, sym_expr_tensor(ctx, ops[i]), op);
  }
  return acc;
}

}  // namespace

engine::Tensor* sym_expr_tensor(ConversionContext& ctx, const ir::SymExpr& expr) {
  using K = ir::SymExpr::Kind;
  switch (expr.kind()) {
    case K::Integer: return int64s(ctx, {*expr.as_int()});
    case K::Symbol: {
      const std::string& s = expr.symbol_name();
      auto cached = ctx.symbol_tensors.find(s);
      if (cached != ctx.symbol_tensors.end()) return cached->second;
      auto src = ctx.symbol_sources.find(s);
      KILN_CHECK(src != ctx.symbol_sources.end(), Unsupported, "shape symbol '", s,
                 "' is not a dim of any engine input, so it cannot be computed in the engine");
      engine::Tensor* t = dim_of(ctx, src->second.tensor, src->second.dim);
      ctx.symbol_tensors[s] = t;
      return t;
    }
    case K::Add: return fold(ctx, expr.operands(), ElementwiseOp::Add);
    case K::Mul: return fold(ctx, expr.operands(), ElementwiseOp::Mul);
    case K::Max: return fold(ctx, expr.operands(), ElementwiseOp::Max);
    case K::Min: return fold(ctx, expr.operands(), ElementwiseOp::Min);
    case K::FloorDiv: return fold(ctx, expr.operands(), ElementwiseOp::FloorDiv);
    case K::Mod: return fold(ctx, expr.operands(), ElementwiseOp::Mod);
    case K::Pow: {
      auto e = expr.operands().at(1).as_int();
      KILN_CHECK(e && *e >= 1 && *e <= 8, Unsupported, "shape expression ", expr.to_string(), " has a non-integer power");
      std::vector<ir::SymExpr> factors(static_cast<size_t>(*e), expr.operands()[0]);
      return fold(ctx, factors, ElementwiseOp::Mul);
    }
    default: break;
  }
  KILN_FAIL(Unsupported, "shape expression ", expr.to_string(), " cannot be computed in the engine");
}

engine::Tensor* sym_int_tensor(ConversionContext& ctx, const SymIntValue& v) {
  if (v.tensor != nullptr) return v.tensor;
  KILN_CHECK(v.value.has_value(), Internal, "empty SymIntValue");
  return int64s(ctx, {*v.value});
}

SymIntValue sym_int_arith(ConversionContext& ctx, const SymIntValue& a, const SymIntValue& b, ElementwiseOp op) {
  if (a.is_static() && b.is_static()) {
    const int64_t x = *a.value, y = *b.value;
    int64_t r = 0;
    switch (op) {
      case ElementwiseOp::Add: r = x + y; break;
      case ElementwiseOp::Sub: r = x - y; break;
      case ElementwiseOp::Mul: r = x * y; break;
      case ElementwiseOp::FloorDiv:
        KILN_CHECK(y != 0, InvalidInput, "division by zero in a size expression");
        r = x / y - ((x % y != 0 && ((x < 0) != (y < 0))) ? 1 : 0);
        break;
      case ElementwiseOp::Mod:
        KILN_CHECK(y != 0, InvalidInput, "modulo by zero in a size expression");
        r = ((x % y) + y) % y;
        break;
      case ElementwiseOp::Max: r = std::max(x, y); break;
      case ElementwiseOp::Min: r = std::min(x, y); break;
      default: KILN_FAIL(Unsupported, "size arithmetic ", engine::elementwise_op_name(op));
    }
    return SymIntValue{r, nullptr};
  }
  SymIntValue out;
  out.tensor = ctx.net.add_elementwise(ctx.name("sym"), sym_int_tensor(ctx, a), sym_int_tensor(ctx, b), op);
  return out;
}

std::optional<std::vector<int64_t>> static_dims(const std::vector<SymIntValue>& dims) {
  std::vector<int64_t> out;
  for (const auto& d : dims) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(*d.value);
  }
  return out;
}

engine::Tensor* shape_tensor(ConversionContext& ctx, const std::vector<SymIntValue>& dims) {
  if (static_dims(dims)) return nullptr;
  std::vector<engine::Tensor*> parts;
  std::vector<int64_t> run;
  auto flush = [&] {
    if (!run.empty()) parts.push_back(int64s(ctx, run));
    run.clear();
  };
  for (const auto& d : dims) {
    if (d.is_static()) {
      run.push_back(*d.value);
    } else {
      flush();
      parts.push_back(d.tensor);
    }
  }
  flush();
  if (parts.size() == 1) return parts[0];
  return ctx.net.add_concat(ctx.name("shape"), parts, 0);
}

}  // namespace kiln::conversion::impl
