// as_strided(x, size, stride, storage_offset) where it is a movement of a contiguous input: the view reads
// element offset + sum_k i_k * stride_k of x's storage. With x contiguous (as the program states its strides,
// storage offset 0) and static, that storage is x's own elements in order, and a view is a movement when, its
// broadcast dims (stride 0) and size-1 dims set aside, the strides sorted in decreasing order each divide the
// one before and step over the whole extent of the next (no element read twice):
//   flat x -> [offset, offset + size_0 * stride_0) (padded past the end with elements never read)
//          -> reshape [size_0, stride_0 / stride_1, ..., stride_m] -> slice each to [size_0, size_1, ..., 1]
//          -> permute into the output's dim order -> reshape with the size-1 dims -> expand the broadcast
//          dims.
// Anything else (overlapping windows such as unfold, a non-contiguous or offset input, reads outside x,
// dynamic sizes) stays in PyTorch with the validator's rejection as the coverage reason.

#include <algorithm>
#include <numeric>
#include <optional>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

struct StridedPlan {
  std::vector<int64_t> order;  // the moving dims (size > 1, stride > 0), by decreasing stride
  std::vector<int64_t>
      extents;         // the reshape of the read window: size of order[0], then stride ratios, last stride
  int64_t window = 1;  // elements of that window (product of extents)
};

// The movement plan of as_strided over a contiguous tensor of `numel` elements, or nullopt when it is none.
std::optional<StridedPlan> plan_strided(int64_t numel, const std::vector<int64_t>& size,
                                        const std::vector<int64_t>& stride, int64_t offset) {
  if (size.size() != stride.size() || offset < 0) return std::nullopt;
  StridedPlan p;
  int64_t last = offset;
  for (size_t k = 0; k < size.size(); ++k) {
    if (size[k] <= 0 || stride[k] < 0) return std::nullopt;  // empty views and negative strides stay in torch
    if (size[k] > 1 && stride[k] > 0) p.order.push_back(static_cast<int64_t>(k));
    if (stride[k] > 0 && (size[k] - 1) > (numel - 1 - last) / stride[k]) return std::nullopt;  // reads past x
    last += (size[k] - 1) * stride[k];
  }
  if (last >= numel) return std::nullopt;
  std::stable_sort(p.order.begin(), p.order.end(), [&](int64_t a, int64_t b) {
    return stride[static_cast<size_t>(a)] > stride[static_cast<size_t>(b)];
  });
  for (size_t j = 0; j < p.order.size(); ++j) {
    const int64_t s = stride[static_cast<size_t>(p.order[j])];
    if (j == 0) {
      p.extents.push_back(size[static_cast<size_t>(p.order[0])]);
      continue;
    }
    const int64_t outer = stride[static_cast<size_t>(p.order[j - 1])];
    const int64_t n = size[static_cast<size_t>(p.order[j])];
    if (outer % s != 0 || outer / s < n) return std::nullopt;  // overlapping or interleaved
    p.extents.push_back(outer / s);
  }
  if (!p.order.empty()) p.extents.push_back(stride[static_cast<size_t>(p.order.back())]);
  for (int64_t e : p.extents) {
    if (p.window > (int64_t{1} << 40) / e) return std::nullopt;
    p.window *= e;
  }
  return p;
}

struct StridedArgs {
  std::vector<int64_t> size, stride;
  int64_t offset = 0;
  int64_t numel = 1;
};

// The static arguments of an as_strided node over a contiguous static input, or nullopt.
std::optional<StridedArgs> strided_args(const ir::Node& n) {
  const ir::Argument* self = n.find_arg("self");
  const ir::Argument* size = n.find_arg("size");
  const ir::Argument* stride = n.find_arg("stride");
  if (self == nullptr || self->kind() != ir::Argument::Kind::Tensor || size == nullptr || stride == nullptr) {
    return std::nullopt;
  }
  const ir::TensorMeta& m = self->as_tensor()->meta();
  const auto sizes = m.static_sizes();
  if (!sizes || m.storage_offset != ir::SymExpr(0)) return std::nullopt;
  if (!m.strides.empty() && m.strides != ir::TensorMeta::contiguous_strides(m.sizes)) {
    // Strides of size-1 dims do not matter.
    const auto contiguous = ir::TensorMeta::contiguous_strides(m.sizes);
    for (size_t k = 0; k < m.strides.size(); ++k) {
      if ((*sizes)[k] != 1 && m.strides[k] != contiguous[k]) return std::nullopt;
    }
  }
  StridedArgs a;
  try {
    a.size = size->as_ints();
    a.stride = stride->as_ints();
    const ir::Argument* offset = n.find_arg("storage_offset");
    a.offset = offset == nullptr || offset->is_none() ? 0 : offset->as_int();
  } catch (const Error&) {
    return std::nullopt;  // symbolic sizes, strides or offset
  }
  for (int64_t d : *sizes) a.numel *= d;
  return a;
}

bool movement_view(const ir::Node& n, const settings::CompilationSettings&) {
  const auto a = strided_args(n);
  return a && a->numel > 0 && plan_strided(a->numel, a->size, a->stride, a->offset).has_value();
}

std::vector<SymIntValue> static_shape(const std::vector<int64_t>& dims) {
  std::vector<SymIntValue> out;
  for (int64_t d : dims) out.push_back(SymIntValue{d, nullptr});
  return out;
}

Outputs as_strided(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& args) {
  const auto a = strided_args(n);
  KILN_CHECK(a.has_value(), Unsupported, ctx.current_node,
             ": as_strided of a non-contiguous or dynamic input");
  const auto p = plan_strided(a->numel, a->size, a->stride, a->offset);
  KILN_CHECK(p.has_value(), Unsupported, ctx.current_node, ": as_strided that is no movement of its input");
  engine::Tensor* x = impl::reshape(ctx, args.tensor(ctx, "self"), static_shape({a->numel}));
  // The read window [offset, offset + window): a negative pad cuts, a positive one appends unread elements.
  x = impl::pad(ctx, x, {-a->offset, a->offset + p->window - a->numel}, 0.0);
  std::vector<int64_t> kept;  // the moving dims' sizes in window order
  if (!p->order.empty()) {
    x = impl::reshape(ctx, x, static_shape(p->extents));
    for (size_t j = 0; j < p->extents.size(); ++j) {
      const int64_t want = j < p->order.size() ? a->size[static_cast<size_t>(p->order[j])] : 1;
      if (want != p->extents[j]) x = impl::slice(ctx, x, static_cast<int64_t>(j), 0, want, 1);
      if (j < p->order.size()) kept.push_back(want);
    }
    x = impl::reshape(ctx, x, static_shape(kept));
    // Window order -> output order of the moving dims.
    std::vector<int64_t> by_output = p->order;
    std::sort(by_output.begin(), by_output.end());
    std::vector<int64_t> perm;
    for (int64_t d : by_output) {
      perm.push_back(std::find(p->order.begin(), p->order.end(), d) - p->order.begin());
    }
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (!identity) x = impl::permute(ctx, x, perm);
  }
  std::vector<int64_t> with_ones(a->size.size(), 1);
  for (int64_t d : p->order) with_ones[static_cast<size_t>(d)] = a->size[static_cast<size_t>(d)];
  x = impl::reshape(ctx, x, static_shape(with_ones));
  if (with_ones != a->size) x = impl::expand(ctx, x, static_shape(a->size));
  return {x};
}

}  // namespace

void register_as_strided_converters(ConverterRegistry& r) {
  detail::add(r, {"aten.as_strided.default"}, as_strided, false, movement_view);
}

}  // namespace kiln::conversion
