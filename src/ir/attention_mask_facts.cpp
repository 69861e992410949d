// What the ops that made a value prove about its elements (see attention_mask_facts.h).

#include "kiln/ir/attention_mask_facts.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace kiln::ir {
namespace {

/// How many producers the analyses follow: masks are a handful of ops deep.
constexpr int kMaxDepth = 16;
/// Bounds and offsets beyond this magnitude are not tracked (far from int64's range, so a checked sum or
/// product of two of them cannot wrap).
constexpr int64_t kMaxBound = int64_t{1} << 40;

bool in_tracked_range(int64_t x) { return x >= -kMaxBound && x <= kMaxBound; }

bool is_any(const Node& n, std::initializer_list<std::string_view> targets) {
  const std::string name = n.target().to_string();
  for (std::string_view t : targets) {
    if (name == t) return true;
  }
  return false;
}

/// The tensor argument `name`, or nullptr when absent, None or not a tensor.
const Value* tensor_of(const Node& n, const std::string& name) {
  const Argument* a = n.find_arg(name);
  return a != nullptr && a->kind() == Argument::Kind::Tensor ? a->as_tensor() : nullptr;
}

std::optional<int64_t> int_number(const Argument* a) {
  if (a == nullptr || a->kind() != Argument::Kind::Int) return std::nullopt;
  return a->as_int();
}

/// `base + alpha * other`, nullopt on leaving the tracked range.
std::optional<int64_t> checked_sum(int64_t base, int64_t alpha, int64_t other) {
  if (!in_tracked_range(base) || !in_tracked_range(alpha) || !in_tracked_range(other)) return std::nullopt;
  int64_t scaled = 0, sum = 0;
  if (__builtin_mul_overflow(alpha, other, &scaled) || __builtin_add_overflow(base, scaled, &sum) ||
      !in_tracked_range(sum)) {
    return std::nullopt;
  }
  return sum;
}

/// alpha of an add (1 when absent); nullopt unless a non-negative integer.
std::optional<int64_t> add_alpha(const Node& n) {
  const auto alpha = n.has_arg("alpha") ? int_number(n.find_arg("alpha")) : std::optional<int64_t>(1);
  return alpha && *alpha >= 0 ? alpha : std::nullopt;
}

bool is_view_of_self(const Node& n) {
  return is_any(n, {"aten.unsqueeze.default", "aten.reshape.default", "aten.view.default",
                    "aten.expand.default", "aten.permute.default", "aten.squeeze.dim", "aten.squeeze.dims",
                    "aten.clone.default", "aten.slice.Tensor", "aten.select.int"});
}

bool is_int64_tensor(const Value* v) {
  return v != nullptr && v->is_tensor() && v->meta().dtype == DType::Int64;
}

/// An arange's start and step where both are integers (arange.default: 0 and 1).
struct Arange {
  int64_t start = 0;
  int64_t step = 1;
};
std::optional<Arange> arange_of(const Node& n) {
  if (is_any(n, {"aten.arange.default"})) return Arange{};
  if (!is_any(n, {"aten.arange.start", "aten.arange.start_step"})) return std::nullopt;
  const auto start = int_number(n.find_arg("start"));
  const auto step =
      is_any(n, {"aten.arange.start"}) ? std::optional<int64_t>(1) : int_number(n.find_arg("step"));
  if (!start || !step || !in_tracked_range(*start)) return std::nullopt;
  return Arange{*start, *step};
}

std::optional<int64_t> lower_bound(const Value* v, int depth) {
  if (!is_int64_tensor(v) || depth > kMaxDepth || v->producer() == nullptr) return std::nullopt;
  const Node& n = *v->producer();
  if (const auto a = arange_of(n)) return a->step > 0 ? std::optional<int64_t>(a->start) : std::nullopt;
  if (is_any(n, {"aten.add.Tensor", "aten.add.Scalar"})) {
    const auto self = lower_bound(tensor_of(n, "self"), depth + 1);
    std::optional<int64_t> other = int_number(n.find_arg("other"));
    if (!other) other = lower_bound(tensor_of(n, "other"), depth + 1);
    const auto alpha = add_alpha(n);
    if (!self || !other || !alpha) return std::nullopt;
    return checked_sum(*self, *alpha, *other);
  }
  if (is_view_of_self(n)) return lower_bound(tensor_of(n, "self"), depth + 1);
  return std::nullopt;
}

/// dim normalized for a tensor of `rank` (nullopt when out of range).
std::optional<int64_t> normalized(int64_t dim, int64_t rank) {
  if (dim < 0) dim += rank;
  return dim >= 0 && dim < rank ? std::optional<int64_t>(dim) : std::nullopt;
}

std::optional<IndexRamp> ramp(const Value* v, int depth) {
  if (!is_int64_tensor(v) || depth > kMaxDepth || v->producer() == nullptr) return std::nullopt;
  const Node& n = *v->producer();
  if (const auto a = arange_of(n))
    return a->step == 1 ? std::optional<IndexRamp>(IndexRamp{-1, a->start}) : std::nullopt;
  if (is_any(n, {"aten.add.Tensor", "aten.add.Scalar"})) {
    const auto self = ramp(tensor_of(n, "self"), depth + 1);
    const auto other = int_number(n.find_arg("other"));
    const auto alpha = add_alpha(n);
    if (!self || !other || !alpha) return std::nullopt;
    const auto offset = checked_sum(self->offset, *alpha, *other);
    if (!offset) return std::nullopt;
    return IndexRamp{self->dim, *offset};
  }
  const Value* self = tensor_of(n, "self");
  if (self == nullptr) return std::nullopt;
  if (is_any(n, {"aten.unsqueeze.default"})) {
    const auto inner = ramp(self, depth + 1);
    const Argument* dim_arg = n.find_arg("dim");
    if (!inner || dim_arg == nullptr || dim_arg->kind() != Argument::Kind::Int) return std::nullopt;
    const int64_t rank = self->meta().rank();
    const auto at = normalized(dim_arg->as_int(), rank + 1);
    const auto ramp_at = normalized(inner->dim, rank);
    if (!at || !ramp_at) return std::nullopt;
    // A dim inserted after the ramp's moves it one further from the end.
    return IndexRamp{*at > *ramp_at ? inner->dim - 1 : inner->dim, inner->offset};
  }
  if (is_any(n, {"aten.expand.default", "aten.clone.default"})) {
    // Dims counted from the end keep their place; the ramp's own dim must keep its size (not a 1 broadcast).
    const auto inner = ramp(self, depth + 1);
    if (!inner) return std::nullopt;
    const auto& in = self->meta().sizes;
    const auto& out = v->meta().sizes;
    const auto in_at = normalized(inner->dim, static_cast<int64_t>(in.size()));
    const auto out_at = normalized(inner->dim, static_cast<int64_t>(out.size()));
    if (!in_at || !out_at || in[static_cast<size_t>(*in_at)] != out[static_cast<size_t>(*out_at)]) {
      return std::nullopt;
    }
    return inner;
  }
  return std::nullopt;
}

bool all_true(const Value* v, int depth) {
  if (v == nullptr || depth > kMaxDepth || !v->is_tensor() || v->meta().dtype != DType::Bool) return false;
  if (v->producer() == nullptr) return false;
  const Node& n = *v->producer();
  if (is_any(n, {"aten.full.default"})) {
    const Argument* fill = n.find_arg("fill_value");
    if (fill == nullptr) return false;
    switch (fill->kind()) {
      case Argument::Kind::Int: return fill->as_int() != 0;
      case Argument::Kind::Bool: return fill->as_bool();
      case Argument::Kind::Float: return fill->as_float() != 0.0;  // NaN included: bool(NaN) is true
      default: return false;
    }
  }
  if (is_any(n, {"aten.ge.Scalar", "aten.gt.Scalar"})) {
    // An integer `other` only: torch compares an integer tensor with a float in float32, where x > c does not
    // follow from the integer bound once |c| >= 2^24.
    const auto bound = lower_bound(tensor_of(n, "self"), depth + 1);
    const auto c = int_number(n.find_arg("other"));
    if (!bound || !c) return false;
    return is_any(n, {"aten.ge.Scalar"}) ? *bound >= *c : *bound > *c;
  }
  if (is_boolean_and(n))
    return all_true(tensor_of(n, "self"), depth + 1) && all_true(tensor_of(n, "other"), depth + 1);
  if (is_view_of_self(n)) return all_true(tensor_of(n, "self"), depth + 1);
  return false;
}

void collect_factors(const Value* m, int depth, std::vector<const Value*>& out) {
  const Node* n = m->producer();
  if (n != nullptr && depth < kMaxDepth && m->meta().dtype == DType::Bool) {
    if (is_any(*n, {"aten.expand.default"})) {
      if (const Value* self = tensor_of(*n, "self"); self != nullptr && self->meta().dtype == DType::Bool) {
        return collect_factors(self, depth + 1, out);
      }
    } else if (is_boolean_and(*n)) {
      const Value* a = tensor_of(*n, "self");
      const Value* b = tensor_of(*n, "other");
      if (a != nullptr && b != nullptr && a->meta().dtype == DType::Bool && b->meta().dtype == DType::Bool) {
        collect_factors(a, depth + 1, out);
        collect_factors(b, depth + 1, out);
        return;
      }
    }
  }
  out.push_back(m);
}

/// The size of `v` along `dim` counted from the end, or nullptr when v has no such dim.
const SymExpr* size_from_end(const Value& v, int64_t dim) {
  const auto& sizes = v.meta().sizes;
  const auto at = normalized(dim, static_cast<int64_t>(sizes.size()));
  return at ? &sizes[static_cast<size_t>(*at)] : nullptr;
}

}  // namespace

std::optional<int64_t> int64_lower_bound(const Value& v) { return lower_bound(&v, 0); }

std::optional<IndexRamp> index_ramp(const Value& v) { return ramp(&v, 0); }

bool provably_all_true(const Value& v) { return all_true(&v, 0); }

bool is_boolean_and(const Node& n) {
  return is_any(n, {"aten.__and__.Tensor", "aten.logical_and.default", "aten.bitwise_and.Tensor"});
}

std::vector<const Value*> and_factors(const Value& mask) {
  std::vector<const Value*> out;
  collect_factors(&mask, 0, out);
  return out;
}

bool is_causal_pattern(const Value& m, const SymExpr& lq, const SymExpr& lk) {
  if (!m.is_tensor() || m.meta().dtype != DType::Bool || m.producer() == nullptr) return false;
  const Node& n = *m.producer();
  const bool le = is_any(n, {"aten.le.Tensor"});
  if (!le && !is_any(n, {"aten.ge.Tensor"})) return false;
  // le(kv, q) or ge(q, kv).
  const Value* kv = tensor_of(n, le ? "self" : "other");
  const Value* q = tensor_of(n, le ? "other" : "self");
  if (kv == nullptr || q == nullptr) return false;
  const auto kv_ramp = index_ramp(*kv);
  const auto q_ramp = index_ramp(*q);
  if (!kv_ramp || !q_ramp || kv_ramp->dim != -1 || q_ramp->dim != -2 || kv_ramp->offset != q_ramp->offset) {
    return false;
  }
  const SymExpr* keys = size_from_end(*kv, -1);
  const SymExpr* queries = size_from_end(*q, -2);
  return keys != nullptr && queries != nullptr && *keys == lk && *queries == lq;
}

bool mask_within_scores(const Value& mask, const Value& q, const Value& k) {
  const auto& m = mask.meta().sizes;
  std::vector<SymExpr> scores = q.meta().sizes;
  if (scores.size() < 2 || k.meta().sizes.size() < 2) return false;
  scores.back() = k.meta().sizes[k.meta().sizes.size() - 2];
  if (m.size() > scores.size()) return false;
  for (size_t i = 1; i <= m.size(); ++i) {
    const SymExpr& d = m[m.size() - i];
    if (d.as_int() != std::optional<int64_t>(1) && d != scores[scores.size() - i]) return false;
  }
  return true;
}

}  // namespace kiln::ir
