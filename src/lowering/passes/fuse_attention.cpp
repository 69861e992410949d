// Rewrites attention written out in matrix products (GPT-2's eager attention, and the same in other models)
// into aten.scaled_dot_product_attention:
//   matmul(softmax(add(mul(matmul(q, transpose(k)), c), mask), -1), v)  ->  sdpa(q, k, v, mask, scale=c)
// where the scaling (mul by c, or div by c: scale 1/c; none: scale 1) and the additive float mask are
// optional, and transpose(k) swaps k's last two dims (permute or transpose). q, k and v have the same rank
// (>= 3) and the same batch dims; the scores, the probabilities and what lies between them have no other
// reader. The engine runs it as one Attention layer (scores, softmax and the weighted sum per block of query
// rows, q/k/v read as views of the projections) where the written-out form ran two batched products, the mask
// add, the softmax and the head permutes as separate layers.

#include <algorithm>
#include <optional>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

// The node producing `v` when it is one of `targets` and `v` has no other reader; else nullptr.
ir::Node* sole_producer(const ir::Graph& graph, ir::Value* v,
                        std::initializer_list<std::string_view> targets) {
  if (v == nullptr || graph.is_output(v) || graph.users(v).size() != 1) return nullptr;
  ir::Node* n = v->producer();
  return n != nullptr && n->outputs().size() == 1 && detail::is_op_any(*n, targets) ? n : nullptr;
}

// The argument `name` as a number; nullopt when it is anything else.
std::optional<double> number_arg(const ir::Node& node, const std::string& name) {
  const ir::Argument* a = node.find_arg(name);
  if (a == nullptr || (a->kind() != ir::Argument::Kind::Float && a->kind() != ir::Argument::Kind::Int)) {
    return std::nullopt;
  }
  return a->as_float();
}

// k when `kt` is k with its last two dims swapped (permute or transpose.int); else nullptr.
ir::Value* untransposed(ir::Value* kt) {
  ir::Node* n = kt->producer();
  if (n == nullptr) return nullptr;
  ir::Value* k = detail::tensor_arg_if_tensor(*n, "self");
  if (k == nullptr) return nullptr;
  const int64_t r = k->meta().rank();
  if (detail::is_op(*n, "aten.permute.default")) {
    const ir::Argument* dims = n->find_arg("dims");
    if (dims == nullptr || dims->kind() != ir::Argument::Kind::Ints) return nullptr;
    const std::vector<int64_t>& p = dims->as_ints();
    if (static_cast<int64_t>(p.size()) != r) return nullptr;
    for (int64_t i = 0; i < r; ++i) {
      const int64_t want = i == r - 1 ? r - 2 : (i == r - 2 ? r - 1 : i);
      if ((p[i] < 0 ? p[i] + r : p[i]) != want) return nullptr;
    }
    return k;
  }
  if (detail::is_op(*n, "aten.transpose.int")) {
    int64_t a = detail::int_arg(*n, "dim0", 0), b = detail::int_arg(*n, "dim1", 0);
    a = a < 0 ? a + r : a;
    b = b < 0 ? b + r : b;
    return std::min(a, b) == r - 2 && std::max(a, b) == r - 1 ? k : nullptr;
  }
  return nullptr;
}

bool same_sizes(const std::vector<ir::SymExpr>& a, const std::vector<ir::SymExpr>& b, size_t n) {
  if (a.size() < n || b.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

struct Match {
  ir::Value *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
  double scale = 1.0;
  std::vector<ir::Node*> chain;  // the nodes the attention replaces, from the output back
};

// The attention computed by `node` (the product of the probabilities and v); nullopt when it is none.
std::optional<Match> match(const ir::Graph& graph, ir::Node* node) {
  if (!detail::is_op(*node, "aten.matmul.default")) return std::nullopt;
  Match m;
  m.chain.push_back(node);
  m.v = detail::tensor_arg_if_tensor(*node, "other");
  ir::Node* softmax = sole_producer(graph, detail::tensor_arg_if_tensor(*node, "self"),
                                    {"aten.softmax.int", "aten._softmax.default"});
  if (m.v == nullptr || softmax == nullptr) return std::nullopt;
  ir::Value* scores = detail::tensor_arg_if_tensor(*softmax, "self");
  if (scores == nullptr) return std::nullopt;
  const int64_t rank = scores->meta().rank();
  const int64_t dim = detail::int_arg(*softmax, "dim", 0);
  if (dim != -1 && dim != rank - 1) return std::nullopt;
  if (detail::is_op(*softmax, "aten._softmax.default") &&
      detail::bool_arg(*softmax, "half_to_float", false)) {
    return std::nullopt;
  }
  if (detail::is_op(*softmax, "aten.softmax.int") && !detail::arg_is_none(*softmax, "dtype"))
    return std::nullopt;
  m.chain.push_back(softmax);
  // The additive mask (either operand), then the scaling, then the product of q and k^T.
  ir::Node* step = sole_producer(graph, scores, {"aten.add.Tensor"});
  if (step != nullptr) {
    ir::Value *a = detail::tensor_arg_if_tensor(*step, "self"),
              *b = detail::tensor_arg_if_tensor(*step, "other");
    const std::optional<double> alpha = number_arg(*step, "alpha");
    if (a == nullptr || b == nullptr || (!detail::arg_is_none(*step, "alpha") && !(alpha && *alpha == 1.0))) {
      return std::nullopt;
    }
    // The scores are the operand with the output's sizes made by the product side; the mask broadcasts to
    // them.
    ir::Node* inner = a->producer();
    const bool a_is_scores =
        inner != nullptr &&
        detail::is_op_any(*inner, {"aten.mul.Tensor", "aten.div.Tensor", "aten.matmul.default"});
    if (!a_is_scores) std::swap(a, b);
    if (a->meta().rank() != rank || !same_sizes(a->meta().sizes, scores->meta().sizes, rank) ||
        b->meta().rank() > rank || b->meta().dtype != scores->meta().dtype) {
      return std::nullopt;
    }
    m.mask = b;
    m.chain.push_back(step);
    scores = a;
  }
  step = sole_producer(graph, scores, {"aten.mul.Tensor", "aten.div.Tensor"});
  if (step != nullptr) {
    const std::optional<double> c = number_arg(*step, "other");
    if (!c || !(*c > 0)) return std::nullopt;
    m.scale = detail::is_op(*step, "aten.div.Tensor") ? 1.0 / *c : *c;
    m.chain.push_back(step);
    scores = detail::tensor_arg_if_tensor(*step, "self");
    if (scores == nullptr) return std::nullopt;
  }
  ir::Node* qk = sole_producer(graph, scores, {"aten.matmul.default"});
  if (qk == nullptr) return std::nullopt;
  m.chain.push_back(qk);
  m.q = detail::tensor_arg_if_tensor(*qk, "self");
  ir::Value* kt = detail::tensor_arg_if_tensor(*qk, "other");
  if (m.q == nullptr || kt == nullptr) return std::nullopt;
  m.k = untransposed(kt);
  if (m.k == nullptr) return std::nullopt;
  // Same rank >= 3, the same batch dims, k and v with the same number of keys, a floating dtype.
  const auto &qs = m.q->meta().sizes, &ks = m.k->meta().sizes, &vs = m.v->meta().sizes;
  const size_t r = qs.size();
  if (r < 3 || ks.size() != r || vs.size() != r || !same_sizes(qs, ks, r - 2) || !same_sizes(qs, vs, r - 2) ||
      !(ks[r - 2] == vs[r - 2]) || !(qs[r - 1] == ks[r - 1]) || !is_floating(m.q->meta().dtype) ||
      m.k->meta().dtype != m.q->meta().dtype || m.v->meta().dtype != m.q->meta().dtype) {
    return std::nullopt;
  }
  return m;
}

bool run_fuse_attention(ir::Graph& graph, const PassContext&) {
  // Each rewrite erases nodes, so the node list is taken afresh after each one.
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (ir::Node* node : graph.nodes()) {
      std::optional<Match> m = match(graph, node);
      if (!m) continue;
      std::vector<ir::NamedArgument> args = {
          detail::named("query", ir::Argument::tensor(m->q)),
          detail::named("key", ir::Argument::tensor(m->k)),
          detail::named("value", ir::Argument::tensor(m->v)),
          detail::named("attn_mask", m->mask ? ir::Argument::tensor(m->mask) : ir::Argument::none()),
          detail::named("dropout_p", ir::Argument::float_(0.0)),
          detail::named("is_causal", ir::Argument::bool_(false)),
          detail::named("scale", ir::Argument::float_(m->scale), true),
          detail::named("enable_gqa", ir::Argument::bool_(false), true)};
      ir::Value* sdpa =
          detail::emit(graph, node, "aten.scaled_dot_product_attention.default", std::move(args),
                       node->output(0)->meta(), "scaled_dot_product_attention");
      ir::Value* kt = detail::tensor_arg_if_tensor(*m->chain.back(), "other");
      detail::replace_node(graph, node, {sdpa});
      for (size_t i = 1; i < m->chain.size(); ++i) graph.erase_node(m->chain[i]);
      ir::Node* transpose = kt->producer();
      if (transpose != nullptr && !graph.is_output(kt) && graph.users(kt).empty())
        graph.erase_node(transpose);
      changed = again = true;
      break;
    }
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_fuse_attention_pass() {
  return std::make_shared<FunctionPass>(
      "fuse_attention",
      "Rewrites attention written out (matmul(softmax(matmul(q, k^T) * c + mask), v)) into "
      "aten.scaled_dot_product_attention.",
      run_fuse_attention);
}

}  // namespace kiln::lowering
