#pragma once
// What the ops that made a value prove about its elements, for attention masks. transformers builds its masks
// from aranges (q_idx, kv_idx) combined by comparisons and ANDs: an encoder's `ones & (q_idx >= 0) &
// padding`, a decoder's `ones & (kv_idx <= q_idx) & padding`. These facts let lowering drop the factors that
// are true everywhere (simplify_attention_mask) and let the attention converter read `kv_idx <= q_idx` as the
// engine's causal flag. Every fact is proved from the ops alone (no values are computed) and is conservative:
// an op the analysis does not know proves nothing.

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

/// A lower bound of every element of the int64 tensor `v` (arange with a positive step, sums of bounded
/// values and integer constants with alpha >= 0, views); nullopt when the ops prove none. int64 only:
/// narrower integer types wrap within the tracked range.
std::optional<int64_t> int64_lower_bound(const Value& v);

/// v's elements equal their index along one dim plus `offset`, whatever the other indices: an arange of step
/// 1, plus integer constants, through unsqueeze / expand of the other dims. `dim` counts from the end (-1:
/// last).
struct IndexRamp {
  int64_t dim = -1;
  int64_t offset = 0;
};
std::optional<IndexRamp> index_ramp(const Value& v);

/// Whether every element of the boolean tensor `v` is provably true: a `full` of a nonzero value, `x >= c` /
/// `x > c` with c an integer and int64_lower_bound(x) >= c (> c), ANDs and views of such.
bool provably_all_true(const Value& v);

/// Whether `n` is a boolean AND (__and__, logical_and, bitwise_and).
bool is_boolean_and(const Node& n);

/// The factors of the boolean AND tree that makes `mask` (expands looked through); {mask} when it is no AND.
std::vector<const Value*> and_factors(const Value& mask);

/// Whether the boolean `m` is `key <= query` over the scores' last two dims, the top-left causal mask of
/// scaled_dot_product_attention(is_causal=True): le(kv, q) or ge(q, kv) with kv a ramp of Lk along the last
/// dim and q a ramp of Lq along the second last, of the same offset.
bool is_causal_pattern(const Value& m, const SymExpr& lq, const SymExpr& lk);

/// Whether every dim of `mask` (aligned from the end) is 1 or the matching dim of the scores [q's batch
/// dims..., Lq, Lk] of an attention of query `q` and key `k`: then the mask widens no dim of the result, and
/// a smaller mask it was broadcast from means the same to the attention.
bool mask_within_scores(const Value& mask, const Value& q, const Value& k);

}  // namespace kiln::ir
