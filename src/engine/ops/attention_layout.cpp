#include "engine/ops/attention_layout.h"

#include <algorithm>
#include <numeric>

#include "kiln/support/error.h"

namespace kiln::engine {

AttentionOperand attention_operand(const AttentionParams& p, int i, const Dims& tensor_dims) {
  const AttentionView& v = p.view(i);
  AttentionOperand op;
  if (!v.empty()) {
    op.dims = v.dims;
    op.strides = v.strides;
    op.offset = v.offset;
  } else {
    op.dims = tensor_dims;
    op.strides.assign(tensor_dims.size(), 1);
    for (size_t d = tensor_dims.size(); d-- > 1;)
      op.strides[d - 1] = op.strides[d] * std::max<int64_t>(tensor_dims[d], 1);
  }
  if ((i == 1 || i == 2) && p.kv_group > 1) {
    KILN_CHECK(op.dims.size() >= 3, Internal, "grouped attention operand of rank ", op.dims.size());
    op.group = p.kv_group;
    op.dims[op.dims.size() - 3] *= p.kv_group;
  }
  return op;
}

AttentionRows attention_rows(const AttentionOperand& op) {
  const size_t r = op.dims.size();
  KILN_CHECK(r >= 2, Internal, "attention operand of rank ", r);
  AttentionRows rows;
  rows.offset = op.offset;
  rows.row = op.strides[r - 2];
  if (r >= 3) {
    rows.heads = std::max<int64_t>(op.dims[r - 3], 1);
    rows.group = op.group;
    rows.inner = op.strides[r - 3];
  }
  if (r >= 4) {
    rows.outer = op.strides[r - 4];
    for (size_t d = 0; d + 4 < r; ++d) {
      KILN_CHECK(op.dims[d + 1] <= 1 || op.strides[d] == op.strides[d + 1] * op.dims[d + 1], Internal,
                 "attention operand: batch dims that do not collapse");
    }
  } else {
    rows.outer = rows.heads / rows.group * rows.inner;  // one outer batch
  }
  return rows;
}

void check_attention_view(const AttentionView& view, const Dims& tensor_dims, const std::string& what) {
  KILN_CHECK(view.dims.size() == 4 && view.strides.size() == 4, InvalidInput, "attention ", what,
             " view needs 4 dims and 4 strides, got ", view.dims.size(), " and ", view.strides.size());
  KILN_CHECK(view.offset >= 0, InvalidInput, "attention ", what, " view has a negative offset");
  int64_t last = view.offset;
  for (size_t d = 0; d < 4; ++d) {
    KILN_CHECK(view.dims[d] >= 0 && view.strides[d] >= 0, InvalidInput, "attention ", what,
               " view has a negative dim or stride");
    if (view.dims[d] > 0) last += (view.dims[d] - 1) * view.strides[d];
  }
  KILN_CHECK(view.strides[3] == 1 || view.dims[3] <= 1, InvalidInput, "attention ", what,
             " view: the head dim must have stride 1 (got ", view.strides[3], ")");
  bool known = std::all_of(tensor_dims.begin(), tensor_dims.end(), [](int64_t x) { return x >= 0; });
  if (!known) return;
  int64_t numel = 1;
  for (int64_t x : tensor_dims) numel *= x;
  bool any = std::all_of(view.dims.begin(), view.dims.end(), [](int64_t x) { return x > 0; });
  KILN_CHECK(!any || last < numel, InvalidInput, "attention ", what, " view reaches element ", last,
             " of a tensor of ", numel, " elements");
}

bool attention_view_is_permutation(const AttentionView& view) {
  if (view.offset != 0) return false;
  std::vector<size_t> order(view.dims.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Innermost first: by stride, size-1 dims (any stride) ignored.
  std::vector<size_t> used;
  for (size_t d : order) {
    if (view.dims[d] != 1) used.push_back(d);
  }
  std::sort(used.begin(), used.end(), [&](size_t a, size_t b) { return view.strides[a] < view.strides[b]; });
  int64_t expect = 1;
  for (size_t d : used) {
    if (view.strides[d] != expect) return false;
    expect *= view.dims[d];
  }
  return true;
}

}  // namespace kiln::engine
