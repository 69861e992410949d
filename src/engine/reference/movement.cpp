// Reference kernels: constant, shuffle, concat, slice, gather, scatter, padding, fill, shape, nonzero.

#include <cmath>

#include "engine/reference/common.h"
#include "engine/reference/reference.h"

namespace kiln::engine::ref {
namespace {

uint8_t* bytes(const TensorView& t) { return static_cast<uint8_t*>(t.data); }

/// dst = src permuted (dst dim i = src dim perm[i]).
void permute_copy(const uint8_t* src, const Dims& sdims, const std::vector<int64_t>& perm, uint8_t* dst, size_t es) {
  size_t r = sdims.size();
  auto sstr = contiguous_strides(sdims);
  Dims ddims(r);
  std::vector<int64_t> pstr(r);
  for (size_t i = 0; i < r; ++i) { ddims[i] = sdims[perm[i]]; pstr[i] = sstr[perm[i]]; }
  int64_t n = checked_numel(ddims);
  std::vector<int64_t> idx(r, 0);
  int64_t cur = 0;
  for (int64_t e = 0; e < n; ++e) {
    std::memcpy(dst + e * es, src + cur * es, es);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++idx[d] < ddims[d]) { cur += pstr[d]; break; }
      cur -= pstr[d] * (ddims[d] - 1);
      idx[d] = 0;
    }
  }
}

void shuffle(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ShuffleParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  if (x.data == y.data) return;  // a reshape the memory plan made a view of its input: nothing moves
  size_t es = dtype_size(x.dtype);
  std::vector<uint8_t> tmp(x.nbytes());
  Dims d = x.dims;
  if (!p.first_perm.empty()) {
    permute_copy(bytes(x), d, p.first_perm, tmp.data(), es);
    Dims nd;
    for (int64_t q : p.first_perm) nd.push_back(d[q]);
    d = nd;
  } else if (x.nbytes()) {
    std::memcpy(tmp.data(), x.data, x.nbytes());
  }
  if (!p.second_perm.empty()) {
    Dims mid(y.dims.size());
    for (size_t i = 0; i < y.dims.size(); ++i) mid[p.second_perm[i]] = y.dims[i];
    permute_copy(tmp.data(), mid, p.second_perm, bytes(y), es);
  } else if (y.nbytes()) {
    std::memcpy(y.data, tmp.data(), y.nbytes());
  }
}

void concat(const Layer& layer, KernelArgs& args) {
  int64_t axis = layer.get<ConcatParams>().axis;
  const TensorView& y = args.outputs[0];
  size_t es = dtype_size(y.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= y.dims[i];
  for (size_t i = static_cast<size_t>(axis) + 1; i < y.dims.size(); ++i) inner *= y.dims[i];
  int64_t off = 0;
  for (const auto& x : args.inputs) {
    int64_t chunk = x.dims[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      if (chunk) std::memcpy(bytes(y) + (o * y.dims[axis] * inner + off) * es, bytes(x) + o * chunk * es, chunk * es);
    off += chunk;
  }
}

std::vector<int64_t> read_ints(const TensorView& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(load(t, static_cast<int64_t>(i)));
  return v;
}

void slice(const Layer& layer, KernelArgs& args) {
  SliceParams p = layer.get<SliceParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  if (args.inputs.size() > 1) p.start = read_ints(args.inputs[1]);
  if (args.inputs.size() > 3) p.stride = read_ints(args.inputs[3]);
  size_t r = x.dims.size();
  if (p.stride.empty()) p.stride.assign(r, 1);
  KILN_CHECK(p.start.size() == r && p.stride.size() == r, InvalidInput, "slice start/stride need ", r, " entries");
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
  for (size_t d = 0; d < r; ++d) { base += p.start[d] * xs[d]; step[d] = p.stride[d] * xs[d]; }
  std::vector<int64_t> idx(r, 0);
  int64_t cur = base, n = y.numel();
  for (int64_t e = 0; e < n; ++e) {
    std::memcpy(bytes(y) + e * es, bytes(x) + cur * es, es);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++idx[d] < y.dims[d]) { cur += step[d]; break; }
      cur -= step[d] * (y.dims[d] - 1);
      idx[d] = 0;
    }
  }
}

int64_t checked_index(double v, int64_t n) {
  int64_t i = static_cast<int64_t>(v);
  if (i < 0) i += n;
  KILN_CHECK(i >= 0 && i < n, InvalidInput, "index ", static_cast<int64_t>(v), " out of range for size ", n);
  return i;
}

void gather(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<GatherParams>();
  const TensorView &x = args.inputs[0], &ix = args.inputs[1], &y = args.outputs[0];
  size_t es = dtype_size(x.dtype);
  int64_t n = x.dims[p.axis];
  if (p.mode == GatherParams::Default) {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < p.axis; ++i) outer *= x.dims[i];
    for (size_t i = static_cast<size_t>(p.axis) + 1; i < x.dims.size(); ++i) inner *= x.dims[i];
    int64_t ni = ix.numel();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < ni; ++j) {
        int64_t src = checked_index(load(ix, j), n);
        if (inner) std::memcpy(bytes(y) + (o * ni + j) * inner * es, bytes(x) + (o * n + src) * inner * es, inner * es);
      }
    return;
  }
  auto xs = contiguous_strides(x.dims), is = contiguous_strides(ix.dims);
  size_t r = x.dims.size();
  for (int64_t e = 0; e < ix.numel(); ++e) {
    int64_t rem = e, off = 0;
    for (size_t d = 0; d < r; ++d) {
      int64_t c = rem / is[d];
      rem %= is[d];
      if (static_cast<int64_t>(d) == p.axis) c = checked_index(load(ix, e), n);
      else KILN_CHECK(c < x.dims[d], InvalidInput, "gather elements: index dims exceed data dims");
      off += c * xs[d];
    }
    std::memcpy(bytes(y) + e * es, bytes(x) + off * es, es);
  }
}

void scatter(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ScatterParams>();
  const TensorView &x = args.inputs[0], &ix = args.inputs[1], &u = args.inputs[2], &y = args.outputs[0];
  if (x.nbytes()) std::memcpy(y.data, x.data, x.nbytes());
  auto xs = contiguous_strides(x.dims), is = contiguous_strides(ix.dims), us = contiguous_strides(u.dims);
  size_t r = x.dims.size();
  for (int64_t e = 0; e < ix.numel(); ++e) {
    int64_t rem = e, off = 0, uoff = 0;
    for (size_t d = 0; d < r; ++d) {
      int64_t c = rem / is[d];
      rem %= is[d];
      uoff += c * us[d];
      if (static_cast<int64_t>(d) == p.axis) c = checked_index(load(ix, e), x.dims[d]);
      else KILN_CHECK(c < x.dims[d], InvalidInput, "scatter: index dims exceed data dims");
      off += c * xs[d];
    }
    double v = load(u, uoff);
    store(y, off, p.reduction == ScatterParams::Add ? load(y, off) + v : v);
  }
}

void padding(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<PaddingParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  size_t r = x.dims.size(), es = dtype_size(x.dtype);
  auto xs = contiguous_strides(x.dims), ys = contiguous_strides(y.dims);
  for (int64_t e = 0; e < y.numel(); ++e) {
    int64_t rem = e, off = 0;
    bool outside = false;
    for (size_t d = 0; d < r; ++d) {
      int64_t c = rem / ys[d] - p.pre[d];
      rem %= ys[d];
      int64_t n = x.dims[d];
      if (c < 0 || c >= n) {
        switch (p.mode) {
          case PaddingParams::Constant: outside = true; break;
          case PaddingParams::Reflect: c = c < 0 ? -c : 2 * (n - 1) - c; break;
          case PaddingParams::Replicate: c = c < 0 ? 0 : n - 1; break;
          case PaddingParams::Circular: c = ((c % n) + n) % n; break;
        }
      }
      off += c * xs[d];
    }
    if (outside) store(y, e, p.value);
    else std::memcpy(bytes(y) + e * es, bytes(x) + off * es, es);
  }
}

void fill(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<FillParams>();
  const TensorView& y = args.outputs[0];
  double start = args.inputs.size() > 1 ? load(args.inputs[1], 0) : p.value;
  double delta = args.inputs.size() > 2 ? load(args.inputs[2], 0) : p.delta;
  int64_t n = y.numel();
  for (int64_t i = 0; i < n; ++i) {
    double v = p.op == FillParams::Constant ? start
               : p.op == FillParams::Arange ? start + static_cast<double>(i) * delta
               : (n == 1 ? start : start + (delta - start) * static_cast<double>(i) / static_cast<double>(n - 1));
    store(y, i, v);
  }
}

void nonzero(KernelArgs& args) {
  const TensorView &x = args.inputs[0];
  TensorView& y = args.outputs[0];
  size_t r = x.dims.size();
  auto xs = contiguous_strides(x.dims);
  int64_t count = 0;
  for (int64_t e = 0; e < x.numel(); ++e) {
    if (load(x, e) == 0) continue;
    int64_t rem = e;
    for (size_t d = 0; d < r; ++d) {
      store(y, count * static_cast<int64_t>(r) + static_cast<int64_t>(d), static_cast<double>(rem / xs[d]));
      rem %= xs[d];
    }
    ++count;
  }
  y.dims = {count, static_cast<int64_t>(r)};
}

}  // namespace

void execute_pooling(const Layer& layer, KernelArgs& args);
void execute_resize(const Layer& layer, KernelArgs& args);

namespace {
/// Copies every element from the input's format to the output's (any dtype); a blocked output's padded
/// channel tail is zeroed.
void reformat(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ReformatParams>();
  const TensorView& x = args.inputs[0];
  const TensorView& y = args.outputs[0];
  KILN_CHECK(x.format == p.from && y.format == p.to, Internal, "reformat '", layer.name, "': buffers are ",
             tensor_format_name(x.format), " -> ", tensor_format_name(y.format), ", the layer says ",
             tensor_format_name(p.from), " -> ", tensor_format_name(p.to));
  size_t es = dtype_size(x.dtype);
  if (y.nbytes()) std::memset(y.data, 0, y.nbytes());
  int64_t n = x.numel();
  std::vector<int64_t> index(x.dims.size(), 0);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(y.data);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int64_t k = static_cast<int64_t>(x.dims.size()) - 1; k >= 0; --k) {
      index[k] = rest % x.dims[k];
      rest /= x.dims[k];
    }
    std::memcpy(dst + format_offset(p.to, y.dims, index) * es, src + format_offset(p.from, x.dims, index) * es, es);
  }
}
}  // namespace

void execute_movement(const Layer& layer, KernelArgs& args) {
  switch (layer.kind) {
    case LayerKind::Constant:
      if (args.outputs[0].nbytes()) std::memcpy(args.outputs[0].data, layer.weights[0].value.data(), args.outputs[0].nbytes());
      return;
    case LayerKind::Shuffle: shuffle(layer, args); return;
    case LayerKind::Concat: concat(layer, args); return;
    case LayerKind::Slice: slice(layer, args); return;
    case LayerKind::Gather: gather(layer, args); return;
    case LayerKind::Scatter: scatter(layer, args); return;
    case LayerKind::Padding: padding(layer, args); return;
    case LayerKind::Fill: fill(layer, args); return;
    case LayerKind::Shape:
      for (size_t i = 0; i < args.inputs[0].dims.size(); ++i)
        store(args.outputs[0], static_cast<int64_t>(i), static_cast<double>(args.inputs[0].dims[i]));
      return;
    case LayerKind::NonZero: nonzero(args); return;
    case LayerKind::Pooling: execute_pooling(layer, args); return;
    case LayerKind::Resize: execute_resize(layer, args); return;
    case LayerKind::Reformat: reformat(layer, args); return;
    default: KILN_FAIL(Internal, "execute_movement: wrong kind ", layer_kind_name(layer.kind));
  }
}

}  // namespace kiln::engine::ref
