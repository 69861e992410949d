// Rewrites RMS normalization written out in arithmetic into aten.rms_norm:
//   mul(x, rsqrt(add(mean(pow(x, 2), dims, keepdim=True), eps)))  ->  rms_norm(x, shape, None, eps)
// (transformers' LlamaRMSNorm and its copies: Mistral, Qwen, T5's layer norm, ...; pow(x, 2) or mul(x, x),
// either operand order of the outer mul, `dims` the trailing dims of x with static sizes, x of fp32 or fp64).
// A following multiply by a constant of the normalized shape (the norm's weight, `weight * x` in either
// order) becomes the rms_norm's weight when nothing else reads the normalized value. The engine runs it as
// one Normalization layer: one pass over each row instead of a square, a mean, a reciprocal root and two
// products with the [tokens, hidden] activation written out between them. Other forms (another exponent,
// keepdim=False, a scaled add, a mean that also covers a leading dim, a formula in fp16) stay as they are;
// the formula's nodes left without users go with it.

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

/// Whether `v` is x squared: pow(x, 2) or mul(x, x).
bool is_square_of(ir::Value* v, ir::Value* x) {
  if (ir::Node* pow = detail::producer_of(v, "aten.pow.Tensor_Scalar")) {
    const ir::Argument* e = pow->find_arg("exponent");
    return detail::tensor_arg(*pow, "self") == x && e != nullptr &&
           (e->kind() == ir::Argument::Kind::Int || e->kind() == ir::Argument::Kind::Float) &&
           e->as_float() == 2.0;
  }
  if (ir::Node* mul = detail::producer_of(v, "aten.mul.Tensor")) {
    return detail::tensor_arg_if_tensor(*mul, "self") == x &&
           detail::tensor_arg_if_tensor(*mul, "other") == x;
  }
  return false;
}

/// The normalized rank when `mean` is mean(x^2) over the trailing dims of x with keepdim (static sizes); 0
/// otherwise.
int64_t trailing_mean_of_square(const ir::Node& mean, ir::Value* x) {
  if (!detail::arg_is_none(mean, "dtype") || !detail::bool_arg(mean, "keepdim", false)) return 0;
  if (!is_square_of(detail::tensor_arg(mean, "self"), x)) return 0;
  const ir::Argument* dims = mean.find_arg("dim");
  if (dims == nullptr || dims->kind() != ir::Argument::Kind::Ints) return 0;
  const auto& sizes = x->meta().sizes;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<bool> reduced(sizes.size(), false);
  for (int64_t d : dims->as_ints()) {
    if (d < -rank || d >= rank) return 0;
    reduced[static_cast<size_t>(d < 0 ? d + rank : d)] = true;
  }
  int64_t k = 0;  // the reduced dims must be exactly [rank - k, rank)
  while (k < rank && reduced[static_cast<size_t>(rank - 1 - k)]) ++k;
  for (int64_t i = 0; i < rank - k; ++i) {
    if (reduced[static_cast<size_t>(i)]) return 0;
  }
  for (int64_t i = rank - k; i < rank; ++i) {
    if (!sizes[static_cast<size_t>(i)].is_constant()) return 0;
  }
  return k;
}

/// The match: y = x * rsqrt(mean(x^2) + eps) at node `mul`.
struct RmsMatch {
  ir::Value* x = nullptr;
  int64_t normalized_rank = 0;
  double eps = 0;
};

bool match_rms(const ir::Node& mul, RmsMatch& m) {
  if (!detail::is_op(mul, "aten.mul.Tensor") || mul.outputs().size() != 1) return false;
  ir::Value* a = detail::tensor_arg_if_tensor(mul, "self");
  ir::Value* b = detail::tensor_arg_if_tensor(mul, "other");
  if (a == nullptr || b == nullptr) return false;
  for (int order = 0; order < 2; ++order, std::swap(a, b)) {
    ir::Node* rsqrt = detail::producer_of(b, "aten.rsqrt.default");
    ir::Node* add =
        rsqrt ? detail::producer_of(detail::tensor_arg(*rsqrt, "self"), "aten.add.Tensor") : nullptr;
    if (add == nullptr || detail::float_arg(*add, "alpha", 1.0) != 1.0) continue;
    const ir::Argument* eps = add->find_arg("other");
    if (eps == nullptr ||
        (eps->kind() != ir::Argument::Kind::Float && eps->kind() != ir::Argument::Kind::Int))
      continue;
    ir::Node* mean = detail::producer_of(detail::tensor_arg(*add, "self"), "aten.mean.dim");
    const int64_t k = mean ? trailing_mean_of_square(*mean, a) : 0;
    // fp32 / fp64 only: the layer computes in fp32 at least, where a written-out fp16 formula squares in fp16
    // (a row with |x| >= 256 overflows to inf there and gives 0); transformers upcast to fp32 first.
    const DType dt = a->meta().dtype;
    if (k == 0 || eps->as_float() < 0 || (dt != DType::Float32 && dt != DType::Float64) ||
        mul.output(0)->meta().dtype != a->meta().dtype || mul.output(0)->meta().sizes != a->meta().sizes)
      continue;
    m = {a, k, eps->as_float()};
    return true;
  }
  return false;
}

/// The multiply by the norm's weight that reads `y` (the normalized value) when it is y's only reader: a
/// constant of the normalized sizes and y's dtype, in either operand order; the weight goes to `weight`.
ir::Node* weight_multiply(ir::Graph& graph, ir::Value* y, int64_t normalized_rank, ir::Value** weight) {
  const auto users = graph.users(y);
  if (users.size() != 1 || graph.is_output(y) || !detail::is_op(*users[0], "aten.mul.Tensor")) return nullptr;
  ir::Node* mul = users[0];
  ir::Value* a = detail::tensor_arg_if_tensor(*mul, "self");
  ir::Value* b = detail::tensor_arg_if_tensor(*mul, "other");
  ir::Value* w = a == y ? b : b == y ? a : nullptr;
  if (w == nullptr || w == y || w->role() != ir::ValueRole::Constant) return nullptr;
  const auto& ys = y->meta().sizes;
  const std::vector<ir::SymExpr> trailing(ys.end() - normalized_rank, ys.end());
  if (w->meta().sizes != trailing || w->meta().dtype != y->meta().dtype ||
      mul->output(0)->meta().sizes != ys || mul->output(0)->meta().dtype != y->meta().dtype)
    return nullptr;
  *weight = w;
  return mul;
}

bool run_fuse_rms_norm(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (ir::Node* node : graph.nodes()) {
      RmsMatch m;
      if (!match_rms(*node, m)) continue;
      ir::Value* y = node->output(0);
      if (graph.users(y).empty() && !graph.is_output(y)) continue;
      ir::Value* weight = nullptr;
      ir::Node* last = weight_multiply(graph, y, m.normalized_rank, &weight);
      if (last == nullptr) last = node;
      const auto& xs = m.x->meta().sizes;
      std::vector<int64_t> shape;
      for (auto it = xs.end() - m.normalized_rank; it != xs.end(); ++it) shape.push_back(*it->as_int());
      ir::Value* rms =
          detail::emit(graph, last, "aten.rms_norm.default",
                       {detail::named("input", ir::Argument::tensor(m.x)),
                        detail::named("normalized_shape", ir::Argument::ints(shape)),
                        detail::named("weight", weight ? ir::Argument::tensor(weight) : ir::Argument::none()),
                        detail::named("eps", ir::Argument::float_(m.eps))},
                       last->output(0)->meta(), "rms_norm");
      std::vector<ir::Value*> operands = node->inputs();
      detail::replace_node(graph, last, {rms});
      if (last != node) graph.erase_node(node);  // (the weight multiply was its only reader)
      detail::erase_dead_producers(graph, std::move(operands),
                                   {"aten.mul.Tensor", "aten.add.Tensor", "aten.pow.Tensor_Scalar",
                                    "aten.mean.dim", "aten.rsqrt.default"});
      changed = again = true;
      break;
    }
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_fuse_rms_norm_pass() {
  return std::make_shared<FunctionPass>(
      "fuse_rms_norm",
      "Rewrites RMS normalization written out in arithmetic (transformers' "
      "LlamaRMSNorm) into aten.rms_norm, with the weight multiply after it.",
      run_fuse_rms_norm);
}

}  // namespace kiln::lowering
