// einsum as permutes, reshapes, sum reductions and batched matrix multiplies. Operands contract left to
// right: each pair first sums out the labels no later operand or the output needs, then becomes one batched
// matmul [batch, left, contracted] x [batch, contracted, right] -> [batch, left, right] (an outer product
// when nothing is contracted); the last result sums out what the output lacks and is permuted into the
// output's order. Ellipses ("...") become labels of their own, aligned from the right.
//
// Left to PyTorch (the validator says no): a label repeated within one operand or in the output (diagonals
// and traces), a label shared by two operands with different static sizes (broadcasting a size-1 dim), an
// output label no operand has, a malformed equation.

#include <algorithm>
#include <map>
#include <optional>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/linalg.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/reduction.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using Labels = std::vector<int>;

// Ellipsis dims get labels from here on (letters are 0..51).
constexpr int kEllipsisLabel = 100;

struct EinsumSpec {
  std::vector<Labels> operands;
  Labels output;
};

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// One side of the equation ("ij", "b...d") for a tensor of `rank` (rank < 0: the output, whose ellipsis spans
// `ellipsis_rank` dims); nullopt when malformed.
std::optional<Labels> parse_term(const std::string& term, int64_t rank, int64_t ellipsis_rank) {
  Labels letters_before, letters_after;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (ellipsis) return std::nullopt;
      ellipsis = true;
      i += 2;
      continue;
    }
    const int l = letter_label(term[i]);
    if (l < 0) return std::nullopt;
    (ellipsis ? letters_after : letters_before).push_back(l);
  }
  const int64_t named = static_cast<int64_t>(letters_before.size() + letters_after.size());
  const int64_t spanned = rank < 0 ? (ellipsis ? ellipsis_rank : 0) : rank - named;
  if (spanned < 0 || (!ellipsis && spanned != 0) || spanned > ellipsis_rank) return std::nullopt;
  Labels out = letters_before;
  for (int64_t k = ellipsis_rank - spanned; k < ellipsis_rank; ++k)
    out.push_back(kEllipsisLabel + static_cast<int>(k));
  out.insert(out.end(), letters_after.begin(), letters_after.end());
  return out;
}

bool has_repeats(Labels l) {
  std::sort(l.begin(), l.end());
  return std::adjacent_find(l.begin(), l.end()) != l.end();
}

// The equation for operands of the given ranks, or nullopt when it is malformed or needs a diagonal.
std::optional<EinsumSpec> parse_einsum(std::string eq, const std::vector<int64_t>& ranks) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size()) return std::nullopt;
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].find("...") == std::string::npos) continue;
    int64_t letters = 0;
    for (char c : terms[i]) letters += letter_label(c) >= 0 ? 1 : 0;
    ellipsis_rank = std::max(ellipsis_rank, ranks[i] - letters);
  }
  EinsumSpec spec;
  std::map<int, int> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto l = parse_term(terms[i], ranks[i], ellipsis_rank);
    if (!l || has_repeats(*l)) return std::nullopt;
    for (int x : *l) ++count[x];
    spec.operands.push_back(*l);
  }
  if (arrow != std::string::npos) {
    auto out = parse_term(eq.substr(arrow + 2), -1, ellipsis_rank);
    if (!out || has_repeats(*out)) return std::nullopt;
    for (int x : *out) {
      if (!count.count(x)) return std::nullopt;
    }
    spec.output = *out;
  } else {
    // Implicit output: the ellipsis dims, then the letters used once, in alphabetical order.
    for (int64_t k = 0; k < ellipsis_rank; ++k) spec.output.push_back(kEllipsisLabel + static_cast<int>(k));
    for (const auto& [label, n] : count) {
      if (label < kEllipsisLabel && n == 1) spec.output.push_back(label);
    }
  }
  return spec;
}

// A tensor with one label per dim.
struct Term {
  engine::Tensor* t;
  Labels labels;
};

bool contains(const Labels& l, int x) { return std::find(l.begin(), l.end(), x) != l.end(); }

// Sums out the dims whose labels are not in `keep`.
Term sum_out(ConversionContext& ctx, Term x, const Labels& keep) {
  std::vector<int64_t> dims;
  Labels kept;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (contains(keep, x.labels[i])) {
      kept.push_back(x.labels[i]);
    } else {
      dims.push_back(static_cast<int64_t>(i));
    }
  }
  if (dims.empty()) return x;
  return {impl::reduce(ctx, x.t, engine::ReduceOp::Sum, dims, false), kept};
}

// x permuted to `order` (a permutation of its labels).
engine::Tensor* arrange(ConversionContext& ctx, const Term& x, const Labels& order) {
  std::vector<int64_t> perm;
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto at = std::find(x.labels.begin(), x.labels.end(), order[i]) - x.labels.begin();
    perm.push_back(at);
    identity = identity && at == static_cast<int64_t>(i);
  }
  return identity ? x.t : impl::permute(ctx, x.t, perm);
}

SymIntValue product(ConversionContext& ctx, const std::map<int, SymIntValue>& size, const Labels& labels) {
  SymIntValue p{1, nullptr};
  for (int l : labels) p = impl::sym_int_arith(ctx, p, size.at(l), engine::ElementwiseOp::Mul);
  return p;
}

// a (x) b keeping the labels in `keep`, as one batched matmul.
Term contract(ConversionContext& ctx, Term a, Term b, const Labels& keep, std::map<int, SymIntValue>& size) {
  Labels keep_or_shared = keep;
  for (int l : a.labels) {
    if (contains(b.labels, l)) keep_or_shared.push_back(l);
  }
  a = sum_out(ctx, a, keep_or_shared);
  b = sum_out(ctx, b, keep_or_shared);
  Labels batch, left, inner, right;
  for (int l : a.labels) {
    if (!contains(b.labels, l)) {
      left.push_back(l);
    } else {
      (contains(keep, l) ? batch : inner).push_back(l);
    }
  }
  for (int l : b.labels) {
    if (!contains(a.labels, l)) right.push_back(l);
  }
  Labels a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), left.begin(), left.end());
  a_order.insert(a_order.end(), inner.begin(), inner.end());
  b_order.insert(b_order.end(), inner.begin(), inner.end());
  b_order.insert(b_order.end(), right.begin(), right.end());
  const SymIntValue nb = product(ctx, size, batch), nl = product(ctx, size, left),
                    ni = product(ctx, size, inner), nr = product(ctx, size, right);
  engine::Tensor* a3 = impl::reshape(ctx, arrange(ctx, a, a_order), {nb, nl, ni});
  engine::Tensor* b3 = impl::reshape(ctx, arrange(ctx, b, b_order), {nb, ni, nr});
  engine::Tensor* y = impl::matmul(ctx, a3, b3);
  Labels labels = batch;
  labels.insert(labels.end(), left.begin(), left.end());
  labels.insert(labels.end(), right.begin(), right.end());
  std::vector<SymIntValue> shape;
  for (int l : labels) shape.push_back(size.at(l));
  return {impl::reshape(ctx, y, shape), labels};
}

std::string equation(const ir::Node& n) {
  const ir::Argument* e = n.find_arg("equation");
  return e != nullptr && e->kind() == ir::Argument::Kind::String ? e->as_string() : std::string();
}

Outputs einsum(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  std::vector<Term> terms;
  std::vector<int64_t> ranks;
  for (const ArgValue& v : a.list("tensors")) {
    engine::Tensor* t =
        impl::cast(ctx, ConverterArgs::materialize(ctx, v, "einsum operand"), detail::out_dtype(n));
    terms.push_back({t, {}});
    ranks.push_back(t->rank());
  }
  const std::optional<EinsumSpec> spec = parse_einsum(equation(n), ranks);
  KILN_CHECK(spec.has_value(), Unsupported, ctx.current_node, ": einsum equation '", equation(n),
             "' needs a diagonal or is malformed");
  std::map<int, SymIntValue> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    terms[i].labels = spec->operands[i];
    const std::vector<SymIntValue> dims = impl::dims_of(ctx, terms[i].t);
    for (size_t d = 0; d < dims.size(); ++d) {
      SymIntValue& s = size[terms[i].labels[d]];
      if ((!s.is_static() && s.tensor == nullptr) || dims[d].is_static()) s = dims[d];
    }
  }
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    Labels keep = spec->output;
    for (size_t j = i + 1; j < terms.size(); ++j)
      keep.insert(keep.end(), terms[j].labels.begin(), terms[j].labels.end());
    acc = contract(ctx, acc, terms[i], keep, size);
  }
  acc = sum_out(ctx, acc, spec->output);
  engine::Tensor* y = arrange(ctx, acc, spec->output);
  return {y == terms[0].t ? impl::identity(ctx, y) : y};
}

// The equation parses for the operands' ranks, needs no diagonal, and labels shared by operands have equal
// static sizes (no broadcasting of size-1 dims).
bool supported_einsum(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* list = n.find_arg("tensors");
  if (list == nullptr || equation(n).empty()) return false;
  std::vector<const ir::TensorMeta*> metas;
  std::vector<int64_t> ranks;
  for (const ir::Value* v : list->as_tensors()) {
    if (v == nullptr || !v->is_tensor()) return false;
    metas.push_back(&v->meta());
    ranks.push_back(v->meta().rank());
  }
  if (metas.empty()) return false;
  const std::optional<EinsumSpec> spec = parse_einsum(equation(n), ranks);
  if (!spec) return false;
  std::map<int, int64_t> static_size;
  for (size_t i = 0; i < metas.size(); ++i) {
    for (size_t d = 0; d < spec->operands[i].size(); ++d) {
      const ir::SymExpr& s = metas[i]->sizes[d];
      if (!s.is_constant()) continue;
      auto [it, fresh] = static_size.emplace(spec->operands[i][d], *s.as_int());
      if (!fresh && it->second != *s.as_int()) return false;
    }
  }
  return true;
}

}  // namespace

void register_einsum_converters(ConverterRegistry& r) {
  detail::add(r, {"aten.einsum.default"}, einsum, true, supported_einsum);
}

}  // namespace kiln::conversion
