// Slice layers (params: kiln/engine/ops/movement/slice.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"
#include "kiln/support/checked_math.h"

namespace kiln::engine::ops {
namespace {

std::vector<int64_t> read_ints(const TensorView& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(load(t, static_cast<int64_t>(i)));
  return v;
}

}  // namespace

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Slice>(const Layer& layer, const std::vector<ShapeIn>& in) {
  SliceParams p = layer.get<SliceParams>();
  KILN_CHECK(in.size() >= 1 && in.size() <= 4, InvalidInput, "slice takes 1-4 inputs");
  size_t rank = in[0].dims.size();
  bool dyn = false;
  std::vector<int64_t>* fields[3] = {&p.start, &p.size, &p.stride};
  for (size_t i = 1; i < in.size(); ++i) {
    auto v = shape_value(in[i], "slice shape input");
    if (v)
      *fields[i - 1] = *v;
    else {
      fields[i - 1]->assign(rank, kUnknown);
      dyn = true;
    }
  }
  fill_default(p.stride, rank, 1, "stride");
  KILN_CHECK(p.start.size() == rank && p.size.size() == rank, InvalidInput, "slice start/size need ", rank,
             " entries");
  Dims out;
  for (size_t d = 0; d < rank; ++d) {
    int64_t s = p.size[d];
    out.push_back(s);
    if (dyn || in[0].dims[d] < 0 || s <= 0) continue;
    int64_t last = checked_add(p.start[d], checked_mul(s - 1, p.stride[d], "a slice's end"), "a slice's end");
    KILN_CHECK(p.start[d] >= 0 && p.start[d] < in[0].dims[d] && last >= 0 && last < in[0].dims[d],
               InvalidInput, "slice start ", p.start[d], " size ", s, " stride ", p.stride[d],
               " out of range for dim ", d, " of size ", in[0].dims[d]);
  }
  for (int64_t s : out) KILN_CHECK(s >= kUnknown, InvalidInput, "negative slice size ", s);
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Slice>(const Layer& layer, KernelArgs& args) {
  SliceParams p = layer.get<SliceParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  if (args.inputs.size() > 1) p.start = read_ints(args.inputs[1]);
  if (args.inputs.size() > 3) p.stride = read_ints(args.inputs[3]);
  size_t r = x.dims.size();
  if (p.stride.empty()) p.stride.assign(r, 1);
  KILN_CHECK(p.start.size() == r && p.stride.size() == r, InvalidInput, "slice start/stride need ", r,
             " entries");
  for (size_t d = 0; d < r; ++d) {
    if (y.dims[d] == 0) return;
    int64_t last = p.start[d] + (y.dims[d] - 1) * p.stride[d];
    KILN_CHECK(p.start[d] >= 0 && p.start[d] < x.dims[d] && last >= 0 && last < x.dims[d], InvalidInput,
               "slice out of range in dim ", d);
  }
  size_t es = dtype_size(x.dtype);
  auto xs = contiguous_strides(x.dims);
  int64_t base = 0;
  std::vector<int64_t> step(r);
  for (size_t d = 0; d < r; ++d) {
    base += p.start[d] * xs[d];
    step[d] = p.stride[d] * xs[d];
  }
  std::vector<int64_t> idx(r, 0);
  int64_t cur = base, n = y.numel();
  for (int64_t e = 0; e < n; ++e) {
    std::memcpy(bytes(y) + e * es, bytes(x) + cur * es, es);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++idx[d] < y.dims[d]) {
        cur += step[d];
        break;
      }
      cur -= step[d] * (y.dims[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace kiln::engine::ops
