#include "engine/ops/shape_util.h"

#include "kiln/support/checked_math.h"
#include "kiln/support/error.h"

namespace kiln::engine::ops {

void check_float(const ShapeIn& in, const char* what) {
  KILN_CHECK(is_floating(in.dtype), InvalidInput, what, " must be floating point, got ",
             dtype_name(in.dtype));
}

std::optional<std::vector<int64_t>> shape_value(const ShapeIn& in, const char* what) {
  KILN_CHECK(in.dtype == DType::Int64 || in.dtype == DType::Int32, InvalidInput, what,
             " must be an Int64/Int32 shape tensor, got ", dtype_name(in.dtype));
  KILN_CHECK(in.dims.size() <= 1, InvalidInput, what, " must be 0-D or 1-D, got rank ", in.dims.size());
  if (!in.value) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(in.value->numel()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<int64_t>(in.value->get_as_double(static_cast<int64_t>(i)));
  return v;
}

int64_t shape_length(const ShapeIn& in) { return in.dims.empty() ? 1 : in.dims[0]; }

Dims conv_like_out(const Dims& in, const std::vector<int64_t>& k, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& pre, const std::vector<int64_t>& post,
                   const std::vector<int64_t>& dil, bool ceil_mode) {
  Dims out;
  for (size_t i = 0; i < k.size(); ++i) {
    int64_t x = in[i];
    if (x < 0) {
      out.push_back(kUnknown);
      continue;
    }
    const char* what = "a window's output size";
    int64_t span =
        checked_sub(checked_add(checked_add(x, pre[i], what), post[i], what),
                    checked_add(checked_mul(dil[i], checked_sub(k[i], 1, what), what), 1, what), what);
    KILN_CHECK(span >= 0, InvalidInput, "window ", k[i], " (dilation ", dil[i], ") larger than padded input ",
               x, " in spatial dim ", i);
    int64_t o = checked_add(
        ceil_mode ? checked_ceildiv(span, stride[i], what) : checked_floordiv(span, stride[i], what), 1,
        what);
    if (ceil_mode && checked_mul(o - 1, stride[i], what) >= checked_add(x, pre[i], what)) --o;
    out.push_back(o);
  }
  return out;
}

void fill_default(std::vector<int64_t>& v, size_t n, int64_t value, const char* what) {
  if (v.empty()) v.assign(n, value);
  KILN_CHECK(v.size() == n, InvalidInput, what, " has ", v.size(), " entries, expected ", n);
}

void check_post_ops(const Layer& layer, const std::vector<PostOp>& post_ops, const std::vector<ShapeIn>& in,
                    const Dims& out, DType dtype) {
  int64_t first = first_residual_input(layer);
  int64_t sums = count_sum_post_ops(post_ops);
  KILN_CHECK(static_cast<int64_t>(in.size()) == first + sums, InvalidInput, "expected ", first + sums,
             " inputs (", sums, " residuals), got ", in.size());
  for (int64_t i = first; i < first + sums; ++i) {
    KILN_CHECK(in[i].dtype == dtype, InvalidInput, "residual input ", i, " dtype ", dtype_name(in[i].dtype),
               " differs from output ", dtype_name(dtype));
    KILN_CHECK(in[i].dims.size() == out.size(), InvalidInput, "residual input ", i,
               " rank differs from output");
    for (size_t d = 0; d < out.size(); ++d) {
      KILN_CHECK(in[i].dims[d] < 0 || out[d] < 0 || in[i].dims[d] == out[d], InvalidInput, "residual input ",
                 i, " dims ", dims_str(in[i].dims), " differ from output ", dims_str(out));
    }
  }
}

}  // namespace kiln::engine::ops
