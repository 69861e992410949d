// addcmul/addcdiv, baddbmm/addbmm, rsub and square into mul/div/add/sub/bmm/sum; fmod into trunc-div, mul and
// sub; diff into cat, slices and sub.

#include <limits>

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

// addcmul(s, t1, t2, value) = s + value * t1 * t2; addcdiv the same with t1 / t2.
bool decompose_addcmul_addcdiv(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* self = tensor_arg(*n, "self");
  ir::Value* t1 = tensor_arg(*n, "tensor1");
  ir::Value* t2 = tensor_arg(*n, "tensor2");
  const double value = float_arg(*n, "value", 1.0);
  ir::Value* product = n->target().name == "addcmul" ? b.mul(t1, t2) : b.div(t1, t2);
  if (value != 1.0) product = b.mul_scalar(product, value);
  replace_node(g, n, {b.add(self, product)});
  return true;
}

// baddbmm(s, b1, b2, beta, alpha) = beta * s + alpha * bmm(b1, b2); addbmm sums the batch of products.
bool decompose_baddbmm_addbmm(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* self = tensor_arg(*n, "self");
  ir::Value* b1 = tensor_arg(*n, "batch1");
  ir::Value* b2 = tensor_arg(*n, "batch2");
  if (b1->meta().rank() != 3 || b2->meta().rank() != 3) return false;
  const double beta = float_arg(*n, "beta", 1.0);
  const double alpha = float_arg(*n, "alpha", 1.0);
  ir::Value* product = b.op("aten.bmm.default", {named("self", Argument::tensor(b1)), named("mat2", Argument::tensor(b2))},
                            with_sizes(b1->meta(), {b1->meta().sizes[0], b1->meta().sizes[1], b2->meta().sizes[2]}),
                            "bmm");
  if (n->target().name == "addbmm") product = b.reduce("aten.sum.dim_IntList", product, {0}, false);
  if (alpha != 1.0) product = b.mul_scalar(product, alpha);
  ir::Value* result = product;
  if (beta != 0.0) {  // beta == 0 ignores self entirely (nan and inf in it included), as torch does
    ir::Value* scaled = beta == 1.0 ? self : b.mul_scalar(self, beta);
    result = b.add(scaled, product);
  }
  if (result->meta().sizes != n->output(0)->meta().sizes) {
    auto sizes = size_args(g, n, nullptr, n->output(0)->meta().sizes);
    if (!sizes) sizes = size_args(g, n, self, n->output(0)->meta().sizes);
    if (!sizes) return false;
    result = b.op("aten.expand.default",
                  {named("self", Argument::tensor(result)), named("size", sym_ints_argument(*sizes)),
                   named("implicit", Argument::bool_(false), true)},
                  n->output(0)->meta(), "expand");
  }
  replace_node(g, n, {result});
  return true;
}

// rsub(self, other, alpha) = other - alpha * self.
bool decompose_rsub(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* self = tensor_arg(*n, "self");
  const double alpha = float_arg(*n, "alpha", 1.0);
  const ir::Argument& other = n->arg("other");
  ir::Value* result = nullptr;
  if (other.kind() == ir::Argument::Kind::Tensor) {
    result = b.sub(other.as_tensor(), self, alpha);
    if (result->meta().dtype != n->output(0)->meta().dtype) return false;
  } else {
    result = b.add_scalar(b.mul_scalar(self, -alpha), other.as_float());
  }
  replace_node(g, n, {result});
  return true;
}

// square(x) = x * x
bool decompose_square(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* x = tensor_arg(*n, "self");
  replace_node(g, n, {b.mul(x, x)});
  return true;
}

// fmod(a, b) = a - trunc(a / b) * b (C's fmod: the remainder takes the sign of a).
bool decompose_fmod(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const ir::TensorMeta& out = n->output(0)->meta();
  Builder b(g, n);
  if (x->meta().dtype != out.dtype) {
    x = b.op("aten._to_copy.default", to_copy_args(x, out.dtype), with_dtype(x->meta(), out.dtype), "_to_copy");
  }
  const ir::Argument& other = n->arg("other");
  const bool scalar = n->target().overload == "Scalar";
  const ir::Argument trunc = ir::Argument::string("trunc");
  ir::Value* quotient =
      scalar ? b.op("aten.div.Scalar_mode", {named("self", ir::Argument::tensor(x)), named("other", other),
                                             named("rounding_mode", trunc, true)}, out, "div")
             : b.op("aten.div.Tensor_mode", {named("self", ir::Argument::tensor(x)), named("other", other),
                                             named("rounding_mode", trunc, true)}, out, "div");
  ir::Value* product = scalar ? b.op("aten.mul.Scalar", {named("self", ir::Argument::tensor(quotient)),
                                                         named("other", other)}, out, "mul")
                              : b.op("aten.mul.Tensor", {named("self", ir::Argument::tensor(quotient)),
                                                         named("other", other)}, out, "mul");
  replace_node(g, n, {b.op("aten.sub.Tensor", {named("self", ir::Argument::tensor(x)),
                                              named("other", ir::Argument::tensor(product)),
                                              named("alpha", ir::Argument::int_(1), true)}, out, "sub")});
  return true;
}

// diff(x, n, dim, prepend, append): x = cat([prepend, x, append], dim), then n times x[1:] - x[:-1] along dim
// (transformers' mask construction diffs position ids). Bool inputs (torch uses logical xor) and n < 0 stay.
bool decompose_diff(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const ir::TensorMeta& out = n->output(0)->meta();
  if (x == nullptr || x->meta().dtype == DType::Bool || x->meta().dtype != out.dtype ||
      x->meta().rank() == 0) {
    return false;
  }
  const int64_t times = int_arg(*n, "n", 1);
  if (times < 0) return false;
  const int64_t dim = normalize_dim(int_arg(*n, "dim", -1), x->meta().rank(), *n);
  const size_t d = static_cast<size_t>(dim);
  ir::Value* prepend = arg_is_none(*n, "prepend") ? nullptr : tensor_arg(*n, "prepend");
  ir::Value* append = arg_is_none(*n, "append") ? nullptr : tensor_arg(*n, "append");
  std::vector<ir::Value*> parts;
  ir::SymExpr length = 0;
  for (ir::Value* v : {prepend, x, append}) {
    if (v == nullptr) continue;
    if (v->meta().rank() != x->meta().rank() || v->meta().dtype != x->meta().dtype) return false;
    parts.push_back(v);
    length = length + v->meta().sizes[d];
  }
  // Each step shortens the dim by one; torch's result has exactly that length (a static length below n
  // stays).
  const ir::SymExpr result_length = length - ir::SymExpr(times);
  if (result_length != out.sizes[d] || (result_length.as_int() && *result_length.as_int() < 0)) return false;
  Builder b(g, n);
  if (parts.size() > 1) {
    std::vector<ir::SymExpr> sizes = x->meta().sizes;
    sizes[d] = length;
    x = b.op("aten.cat.default",
             {named("tensors", ir::Argument::tensors(parts)), named("dim", ir::Argument::int_(dim))},
             with_sizes(x->meta(), sizes), "cat");
  }
  auto slice = [&](ir::Value* v, int64_t start, int64_t end) {
    std::vector<ir::SymExpr> sizes = v->meta().sizes;
    sizes[d] = sizes[d] - ir::SymExpr(1);
    return b.op("aten.slice.Tensor",
                {named("self", ir::Argument::tensor(v)), named("dim", ir::Argument::int_(dim)),
                 named("start", ir::Argument::int_(start)), named("end", ir::Argument::int_(end)),
                 named("step", ir::Argument::int_(1))},
                with_sizes(v->meta(), sizes), "slice");
  };
  for (int64_t i = 0; i < times; ++i) {
    ir::Value* later = slice(x, 1, std::numeric_limits<int64_t>::max());
    ir::Value* earlier = slice(x, 0, -1);
    x = b.sub(later, earlier);
  }
  replace_node(g, n, {x});
  return true;
}

}  // namespace kiln::lowering::detail
