// Attention layers (params: kiln/engine/ops/attention/attention.h): shape inference and the reference kernel.

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/ops/attention_layout.h"
#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"
#include "kiln/support/checked_math.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Attention>(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<AttentionParams>();
  KILN_CHECK(in.size() == (p.has_mask ? 4u : 3u), InvalidInput, "attention needs q, k, v",
             p.has_mask ? ", mask" : "");
  check_float(in[0], "query");
  // Logical operands: the tensors themselves, or what their views (attention_layout.h) read from them.
  static const char* const kOperandNames[] = {"query", "key", "value", "output"};
  Dims logical[3];
  for (int i = 0; i < 3; ++i) {
    const AttentionView& view = p.view(i);
    if (!view.empty()) check_attention_view(view, in[i].dims, kOperandNames[i]);
    logical[i] = view.empty() ? in[i].dims : view.dims;
  }
  KILN_CHECK(p.kv_group >= 1, InvalidInput, "attention kv_group ", p.kv_group);
  if (p.kv_group > 1) {  // k and v heads (dim -3) each serve kv_group query heads
    for (int i = 1; i < 3; ++i) {
      KILN_CHECK(logical[i].size() >= 3, InvalidInput, "grouped attention needs rank >= 3 ",
                 kOperandNames[i]);
      int64_t& heads = logical[i][logical[i].size() - 3];
      if (heads >= 0) heads = checked_mul(heads, p.kv_group, "attention kv heads");
    }
  }
  const Dims &q = logical[0], &k = logical[1], &v = logical[2];
  KILN_CHECK(in[1].dtype == in[0].dtype && in[2].dtype == in[0].dtype, InvalidInput, "q/k/v dtypes differ");
  KILN_CHECK(q.size() >= 2 && k.size() == q.size() && v.size() == q.size(), InvalidInput,
             "q, k, v must have the same rank >= 2");
  KILN_CHECK(!p.has_views() || q.size() == 4, InvalidInput, "attention views need rank-4 q, k, v");
  size_t r = q.size();
  for (size_t d = 0; d + 2 < r; ++d) {
    KILN_CHECK(q[d] < 0 || k[d] < 0 || v[d] < 0 || (q[d] == k[d] && k[d] == v[d]), InvalidInput,
               "q/k/v batch dims differ");
  }
  KILN_CHECK(q[r - 1] < 0 || k[r - 1] < 0 || q[r - 1] == k[r - 1], InvalidInput,
             "q and k embedding dims differ");
  KILN_CHECK(k[r - 2] < 0 || v[r - 2] < 0 || k[r - 2] == v[r - 2], InvalidInput, "k and v lengths differ");
  if (p.has_mask) {
    const ShapeIn& m = in[3];
    KILN_CHECK(m.dtype == DType::Bool || m.dtype == in[0].dtype, InvalidInput,
               "mask must be Bool or the q dtype");
    Dims scores(q.begin(), q.end() - 1);
    scores.push_back(k[r - 2]);
    Dims b = broadcast_dims(scores, m.dims);
    KILN_CHECK(b.size() == scores.size(), InvalidInput, "mask rank larger than the scores");
  }
  Dims out(q.begin(), q.end() - 1);
  out.push_back(v[r - 1]);
  if (!p.out_view.empty()) {
    check_attention_view(p.out_view, p.out_dims, "output");
    KILN_CHECK(std::all_of(p.out_dims.begin(), p.out_dims.end(), [](int64_t x) { return x >= 0; }),
               InvalidInput, "attention output view over unknown dims");
    for (size_t d = 0; d < out.size(); ++d) {
      KILN_CHECK(out[d] < 0 || out[d] == p.out_view.dims[d], InvalidInput,
                 "attention output view dims differ from the output's");
    }
    const int64_t n = checked_product(p.out_dims, "attention output elements");
    const int64_t m = checked_product(p.out_view.dims, "attention output view elements");
    KILN_CHECK(n == m && attention_view_is_permutation(p.out_view), InvalidInput,
               "attention output view must write every element of its tensor once");
    return {{in[0].dtype, p.out_dims}};
  }
  KILN_CHECK(p.out_dims.empty(), InvalidInput, "attention out_dims without an output view");
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Attention>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<AttentionParams>();
  // Logical operands (attention_layout.h): dense tensors or strided views of the layer's buffers.
  AttentionOperand ops[4];
  AttentionRows rows[4];
  for (int i = 0; i < 4; ++i) {
    ops[i] = attention_operand(p, i, i < 3 ? args.inputs[i].dims : args.outputs[0].dims);
    rows[i] = attention_rows(ops[i]);
  }
  const TensorView &q = args.inputs[0], &kt = args.inputs[1], &v = args.inputs[2], &y = args.outputs[0];
  const Dims& qd = ops[0].dims;
  size_t r = qd.size();
  int64_t lq = qd[r - 2], e = qd[r - 1], lk = ops[1].dims[r - 2], ev = ops[2].dims[r - 1];
  int64_t nb = checked_numel(Dims(qd.begin(), qd.end() - 2));
  double scale = p.scale > 0 ? p.scale : 1.0 / std::sqrt(static_cast<double>(e));
  // Element (b, row, col) of operand i; columns have stride 1 only in views, so use the real column stride.
  auto at = [&](int i, int64_t b, int64_t row, int64_t col) {
    return rows[i].start(b) + row * rows[i].row + col * ops[i].strides[r - 1];
  };
  std::vector<int64_t> moff;
  const TensorView* mask = p.has_mask ? &args.inputs[3] : nullptr;
  if (mask) {
    Dims sd(qd.begin(), qd.end() - 1);
    sd.push_back(lk);
    moff = broadcast_offsets(mask->dims, sd);
  }
  parallel(args.pool, nb * lq, 1, [&](int64_t s, int64_t end) {
    std::vector<double> sc(static_cast<size_t>(lk));
    for (int64_t bi = s; bi < end; ++bi) {
      int64_t b = bi / lq, i = bi % lq;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < lk; ++j) {
        double d = 0;
        for (int64_t c = 0; c < e; ++c) d += load(q, at(0, b, i, c)) * load(kt, at(1, b, j, c));
        d *= scale;
        if (p.causal && j > i) d = -std::numeric_limits<double>::infinity();
        if (mask) {
          double mv = load(*mask, moff[bi * lk + j]);
          if (mask->dtype == DType::Bool) {
            if (mv == 0) d = -std::numeric_limits<double>::infinity();
          } else {
            d += mv;
          }
        }
        sc[j] = d;
        mx = std::max(mx, d);
      }
      // A -inf score (masked) has probability 0, also when every score is -inf: then the row attends to
      // nothing and its output is 0 x v, as torch's safe softmax (exp(-inf - -inf) would be NaN). A NaN score
      // keeps the row NaN.
      const double neg_inf = -std::numeric_limits<double>::infinity();
      double sum = 0;
      for (int64_t j = 0; j < lk; ++j) sum += (sc[j] = sc[j] == neg_inf ? 0.0 : std::exp(sc[j] - mx));
      const bool none = sum == 0;
      for (int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j) acc += sc[j] * load(v, at(2, b, j, c));
        store(y, at(3, b, i, c), none ? acc : acc / sum);
      }
    }
  });
}

}  // namespace kiln::engine::ops
