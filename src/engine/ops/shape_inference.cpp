#include "engine/ops/shape_inference.h"

#include <algorithm>

#include "kiln/support/error.h"

namespace kiln::engine {

bool dims_known(const Dims& dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
}

std::string dims_str(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

int64_t count_sum_post_ops(const std::vector<PostOp>& post_ops) {
  return std::count_if(post_ops.begin(), post_ops.end(),
                       [](const PostOp& p) { return p.kind == PostOp::Sum; });
}

int64_t first_residual_input(const Layer& layer) {
  if (layer.kind == LayerKind::Convolution) return 1;
  bool b_weight = !layer.weights.empty() && layer.weights[0].defined();
  return b_weight ? 1 : 2;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  KILN_CHECK(a >= 0 && a < std::max<int64_t>(rank, 1), InvalidInput, what, " ", axis,
             " out of range for rank ", rank);
  return a;
}

Dims broadcast_dims(const Dims& a, const Dims& b) {
  size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x == 1)
      out[i] = y;
    else if (y == 1)
      out[i] = x;
    else if (x < 0)
      out[i] = y;
    else if (y < 0)
      out[i] = x;
    else {
      KILN_CHECK(x == y, InvalidInput, "cannot broadcast ", dims_str(a), " with ", dims_str(b));
      out[i] = x;
    }
  }
  return out;
}

}  // namespace kiln::engine
