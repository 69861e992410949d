#include "kiln/conversion/impl/movement.h"

#include <algorithm>

#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/dtype_promotion.h"
#include "kiln/support/error.h"

namespace kiln::conversion::impl {

using engine::ElementwiseOp;

engine::Tensor* reshape(ConversionContext& ctx, engine::Tensor* x, const std::vector<SymIntValue>& shape) {
  engine::ShuffleParams p;
  p.has_reshape = true;
  if (auto s = static_dims(shape)) {
    p.reshape = *s;
    // A static target shape with 0 entries means a real 0 to torch; the shuffle reads 0 as "copy": use a tensor.
    if (std::find(s->begin(), s->end(), 0) == s->end()) return ctx.net.add_shuffle(ctx.name("reshape"), x, p);
    return ctx.net.add_shuffle(ctx.name("reshape"), x, p, int64s(ctx, *s));
  }
  // One -1 entry may remain: the shuffle infers it from the shape tensor too.
  return ctx.net.add_shuffle(ctx.name("reshape"), x, p, shape_tensor(ctx, shape));
}

engine::Tensor* permute(ConversionContext& ctx, engine::Tensor* x, std::vector<int64_t> perm) {
  KILN_CHECK(static_cast<int64_t>(perm.size()) == x->rank(), InvalidInput, ctx.current_node, ": permutation of ",
             perm.size(), " dims for a rank-", x->rank(), " tensor");
  for (auto& d : perm) d = normalize_dim(d, x->rank(), ctx.current_node);
  engine::ShuffleParams p;
  p.first_perm = perm;
  return ctx.net.add_shuffle(ctx.name("permute"), x, p);
}

engine::Tensor* unsqueeze(ConversionContext& ctx, engine::Tensor* x, int64_t dim) {
  std::vector<SymIntValue> dims = dims_of(ctx, x);
  dims.insert(dims.begin() + dim, SymIntValue{1, nullptr});
  return reshape(ctx, x, dims);
}

engine::Tensor* squeeze(ConversionContext& ctx, engine::Tensor* x, std::vector<int64_t> drop) {
  for (auto& d : drop) d = normalize_dim(d, x->rank(), ctx.current_node);
  std::vector<SymIntValue> all = dims_of(ctx, x), kept;
  for (int64_t i = 0; i < x->rank(); ++i) {
    const bool listed = std::find(drop.begin(), drop.end(), i) != drop.end();
    if (listed && x->dims()[i] == 1) continue;
    kept.push_back(all[i]);
  }
  if (static_cast<int64_t>(kept.size()) == x->rank()) return identity(ctx, x);
  return reshape(ctx, x, kept);
}

engine::Tensor* flatten(ConversionContext& ctx, engine::Tensor* x, int64_t start, int64_t end) {
  if (x->rank() == 0) return reshape(ctx, x, {SymIntValue{1, nullptr}});
  start = normalize_dim(start, x->rank(), ctx.current_node);
  end = normalize_dim(end, x->rank(), ctx.current_node);
  std::vector<SymIntValue> all = dims_of(ctx, x), out;
  for (int64_t i = 0; i < start; ++i) out.push_back(all[i]);
  SymIntValue prod{1, nullptr};
  for (int64_t i = start; i <= end; ++i) prod = sym_int_arith(ctx, prod, all[i], ElementwiseOp::Mul);
  out.push_back(prod);
  for (int64_t i = end + 1; i < x->rank(); ++i) out.push_back(all[i]);
  return reshape(ctx, x, out);
}

engine::Tensor* expand(ConversionContext& ctx, engine::Tensor* x, const std::vector<SymIntValue>& shape) {
  const int64_t r = static_cast<int64_t>(shape.size());
  KILN_CHECK(r >= x->rank(), InvalidInput, ctx.current_node, ": expand to fewer dims than the input has");
  std::vector<SymIntValue> in = dims_of(ctx, x), target;
  const int64_t new_dims = r - x->rank();
  std::vector<SymIntValue> lifted(static_cast<size_t>(new_dims), SymIntValue{1, nullptr});
  lifted.insert(lifted.end(), in.begin(), in.end());
  if (r != x->rank()) x = reshape(ctx, x, lifted);
  for (int64_t i = 0; i < r; ++i) {
    const bool keep = shape[i].is_static() && *shape[i].value == -1;
    KILN_CHECK(!keep || i >= new_dims, InvalidInput, ctx.current_node,
               ": expand size -1 for the new leading dim ", i, " (torch allows -1 only for existing dims)");
    target.push_back(keep ? lifted[i] : shape[i]);
  }
  // Static shapes: a slice that steps 0 along the broadcast dims (size-1 dims of x), as TensorRT expands: one
  // copy, and no constant of the output's size in the plan.
  const std::optional<std::vector<int64_t>> in_static = static_dims(lifted), out_static = static_dims(target);
  if (in_static && out_static) {
    engine::SliceParams p{std::vector<int64_t>(static_cast<size_t>(r), 0), *out_static,
                          std::vector<int64_t>(static_cast<size_t>(r), 1)};
    for (size_t i = 0; i < p.size.size(); ++i) {
      const int64_t from = (*in_static)[i], to = p.size[i];
      KILN_CHECK(from == to || from == 1, InvalidInput, ctx.current_node, ": expand of dim ", i, " from ",
                 from, " to ", to);
      if (from == 1) p.stride[i] = 0;
    }
    return ctx.net.add_slice(ctx.name("expand"), x, p);
  }
  // Otherwise x broadcast against a zero tensor of the target shape in an elementwise Add (integer and float
  // types alike), which also broadcasts a dynamic dim that is 1 at run time.
  engine::FillParams f;
  f.op = engine::FillParams::Constant;
  f.dtype = x->dtype() == DType::Bool ? DType::Int32 : x->dtype();
  f.value = 0.0;
  engine::Tensor* zeros = nullptr;
  if (auto s = static_dims(target)) {
    f.dims = *s;
    zeros = ctx.net.add_fill(ctx.name("zeros"), f);
  } else {
    f.dims.assign(target.size(), -1);
    zeros = ctx.net.add_fill(ctx.name("zeros"), f, shape_tensor(ctx, target));
  }
  if (x->dtype() == DType::Bool) {
    engine::Tensor* xi = cast(ctx, x, DType::Int32);
    return cast(ctx, ctx.net.add_elementwise(ctx.name("expand"), xi, zeros, ElementwiseOp::Add), DType::Bool);
  }
  return ctx.net.add_elementwise(ctx.name("expand"), x, zeros, ElementwiseOp::Add);
}

engine::Tensor* slice(ConversionContext& ctx, engine::Tensor* x, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step) {
  KILN_CHECK(step > 0, Unsupported, ctx.current_node, ": slice step must be positive");
  dim = normalize_dim(dim, x->rank(), ctx.current_node);
  const int64_t r = x->rank();
  const int64_t n = x->dims()[dim];
  std::vector<int64_t> st(r, 0), sz(x->dims()), sd(r, 1);
  sd[dim] = step;
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(INT64_MAX);
  std::vector<SymIntValue> size_dims = dims_of(ctx, x);
  SymIntValue start_v{0, nullptr};
  if (n >= 0) {
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, s, n);
    st[dim] = s;
    sz[dim] = (e - s + step - 1) / step;
    size_dims[dim] = SymIntValue{sz[dim], nullptr};
    if (sz[dim] == 0) st[dim] = 0;
  } else {
    // Dynamic extent: start/end are taken as within range after wrapping negatives (the program was traced so).
    SymIntValue len = size_dims[dim];
    start_v = s >= 0 ? SymIntValue{s, nullptr} : sym_int_arith(ctx, len, SymIntValue{s, nullptr}, ElementwiseOp::Add);
    SymIntValue end_v = e >= (INT64_MAX >> 2) ? len
                        : e >= 0              ? sym_int_arith(ctx, len, SymIntValue{e, nullptr}, ElementwiseOp::Min)
                                 : sym_int_arith(ctx, len, SymIntValue{e, nullptr}, ElementwiseOp::Add);
    SymIntValue span = sym_int_arith(ctx, end_v, start_v, ElementwiseOp::Sub);
    span = sym_int_arith(ctx, span, SymIntValue{step - 1, nullptr}, ElementwiseOp::Add);
    size_dims[dim] = sym_int_arith(ctx, span, SymIntValue{step, nullptr}, ElementwiseOp::FloorDiv);
  }
  engine::SliceParams p{st, sz, sd};
  for (auto& v : p.size) v = std::max<int64_t>(v, 0);
  engine::Tensor* size_t_ = shape_tensor(ctx, size_dims);
  engine::Tensor* start_t = nullptr;
  if (n < 0 && start_v.is_static()) p.start[dim] = *start_v.value;
  if (size_t_ != nullptr) {
    // Shape-tensor sizes come with a shape-tensor start (the engine takes both or neither).
    std::vector<SymIntValue> starts;
    for (int64_t v : p.start) starts.push_back(SymIntValue{v, nullptr});
    starts[dim] = start_v;
    start_t = start_v.is_static() ? int64s(ctx, p.start) : shape_tensor(ctx, starts);
  }
  return ctx.net.add_slice(ctx.name("slice"), x, p, start_t, size_t_);
}

engine::Tensor* select(ConversionContext& ctx, engine::Tensor* x, int64_t dim, int64_t index) {
  dim = normalize_dim(dim, x->rank(), ctx.current_node);
  const int64_t n = x->dims()[dim];
  if (n >= 0) {
    KILN_CHECK(index >= -n && index < n, InvalidInput, ctx.current_node, ": select index ", index, " out of range ", n);
    if (index < 0) index += n;
  }
  // A gather with a 0-d index drops the dim (and handles a negative index on a dynamic dim).
  return ctx.net.add_gather(ctx.name("select"), x, scalar(ctx, static_cast<double>(index), DType::Int64),
                            engine::GatherParams{engine::GatherParams::Default, dim});
}

engine::Tensor* cat(ConversionContext& ctx, std::vector<engine::Tensor*> xs, int64_t dim) {
  KILN_CHECK(!xs.empty(), InvalidInput, ctx.current_node, ": cat of no tensors");
  // torch skips 1-D empty tensors in cat.
  std::vector<engine::Tensor*> kept;
  for (auto* t : xs) {
    if (t->rank() == 1 && t->dims()[0] == 0 && xs.size() > 1) continue;
    kept.push_back(t);
  }
  if (kept.empty()) kept.push_back(xs[0]);
  DType d = kept[0]->dtype();
  for (auto* t : kept) d = promote_types(d, 1, t->dtype(), 1);
  for (auto*& t : kept) t = cast(ctx, t, d);
  dim = normalize_dim(dim, kept[0]->rank(), ctx.current_node);
  if (kept.size() == 1) return identity(ctx, kept[0]);
  return ctx.net.add_concat(ctx.name("cat"), kept, dim);
}

std::vector<engine::Tensor*> split(ConversionContext& ctx, engine::Tensor* x, const std::vector<int64_t>& sizes,
                                   int64_t dim) {
  dim = normalize_dim(dim, x->rank(), ctx.current_node);
  std::vector<engine::Tensor*> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(ctx, x, dim, at, at + s, 1));
    at += s;
  }
  return out;
}

engine::Tensor* index_select(ConversionContext& ctx, engine::Tensor* x, int64_t dim, engine::Tensor* index) {
  dim = normalize_dim(dim, x->rank(), ctx.current_node);
  index = cast(ctx, index, DType::Int64);
  return ctx.net.add_gather(ctx.name("gather"), x, index, engine::GatherParams{engine::GatherParams::Default, dim});
}

engine::Tensor* gather_elements(ConversionContext& ctx, engine::Tensor* x, int64_t dim, engine::Tensor* index) {
  dim = normalize_dim(dim, x->rank(), ctx.current_node);
  index = cast(ctx, index, DType::Int64);
  return ctx.net.add_gather(ctx.name("gather"), x, index, engine::GatherParams{engine::GatherParams::Elements, dim});
}

engine::Tensor* pad(ConversionContext& ctx, engine::Tensor* x, const std::vector<int64_t>& pads, double value,
                    engine::PaddingParams::Mode mode) {
  KILN_CHECK(pads.size() % 2 == 0 && static_cast<int64_t>(pads.size() / 2) <= x->rank(), InvalidInput,
             ctx.current_node, ": pad list of length ", pads.size(), " for rank ", x->rank());
  engine::PaddingParams p;
  p.mode = mode;
  p.value = value;
  p.pre.assign(x->rank(), 0);
  p.post.assign(x->rank(), 0);
  bool negative = false;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    const int64_t d = x->rank() - 1 - static_cast<int64_t>(i);
    p.pre[d] = pads[2 * i];
    p.post[d] = pads[2 * i + 1];
    negative = negative || p.pre[d] < 0 || p.post[d] < 0;
  }
  if (negative) {
    // Negative pads crop: slice first, then pad the rest.
    for (int64_t d = 0; d < x->rank(); ++d) {
      if (p.pre[d] < 0 || p.post[d] < 0) {
        const int64_t s = std::max<int64_t>(0, -p.pre[d]);
        const std::optional<int64_t> e = p.post[d] < 0 ? std::optional<int64_t>(p.post[d]) : std::nullopt;
        x = slice(ctx, x, d, s, e, 1);
        p.pre[d] = std::max<int64_t>(0, p.pre[d]);
        p.post[d] = std::max<int64_t>(0, p.post[d]);
      }
    }
  }
  return ctx.net.add_padding(ctx.name("pad"), x, p);
}

}  // namespace kiln::conversion::impl
