// Writes into (part of) a tensor, as functionalization leaves them: slice_scatter → cat of the kept slices and
// the source; select_scatter → the same with the source unsqueezed; fill.Scalar → full; fill.Tensor → expand
// of the (cast) value; copy → expand of the source cast to self's dtype. Slice bounds and the scattered dim must
// be static.

#include <algorithm>

#include "builder.h"
#include "decompositions_internal.h"
#include "kiln/support/error.h"

namespace kiln::lowering::detail {

using ir::Argument;

namespace {

// The argument as a constant, or nullopt when it is symbolic; `fallback` when absent or None.
std::optional<int64_t> static_int(const ir::Node& n, const std::string& name, int64_t fallback) {
  const ir::Argument* arg = n.find_arg(name);
  if (arg == nullptr || arg->is_none()) return fallback;
  const ir::SymIntArg value = arg->as_sym_int();
  if (value.value != nullptr) return std::nullopt;
  return value.constant;
}

// base with [start, start + src.size(dim)) along `dim` replaced by src (step 1), as slices of base and src joined
// by cat. nullptr when a size is symbolic.
ir::Value* scatter_range(Builder& b, ir::Node* n, ir::Value* base, ir::Value* src, int64_t dim, int64_t start,
                         int64_t end) {
  auto size = base->meta().sizes[static_cast<size_t>(dim)].as_int();
  if (!size) return nullptr;
  std::vector<ir::Value*> parts;
  if (start > 0) parts.push_back(b.slice(base, dim, 0, start));
  parts.push_back(src);
  if (end < *size) parts.push_back(b.slice(base, dim, end, *size));
  if (parts.size() == 1) return src;
  return b.op("aten.cat.default", {named("tensors", Argument::tensors(parts)), named("dim", Argument::int_(dim))},
              n->output(0)->meta(), "cat");
}

}  // namespace

bool decompose_slice_scatter(ir::Graph& g, ir::Node* n) {
  ir::Value* base = tensor_arg(*n, "self");
  ir::Value* src = tensor_arg(*n, "src");
  const int64_t rank = base->meta().rank();
  const int64_t dim = normalize_dim(int_arg(*n, "dim", 0), rank, *n);
  auto size = base->meta().sizes[static_cast<size_t>(dim)].as_int();
  auto start = static_int(*n, "start", 0);
  auto end = static_int(*n, "end", size.value_or(0));
  auto step = static_int(*n, "step", 1);
  if (!size || !start || !end || !step || *step != 1) return false;
  // Python slice bounds: negative counts from the end, then clamped to [0, size].
  int64_t s = *start < 0 ? *start + *size : *start;
  int64_t e = *end < 0 ? *end + *size : *end;
  s = std::clamp<int64_t>(s, 0, *size);
  e = std::clamp<int64_t>(e, s, *size);
  if (src->meta().sizes[static_cast<size_t>(dim)].as_int() != e - s) return false;
  Builder b(g, n);
  ir::Value* out = scatter_range(b, n, base, src, dim, s, e);
  if (out == nullptr) return false;
  replace_node(g, n, {out});
  return true;
}

bool decompose_select_scatter(ir::Graph& g, ir::Node* n) {
  ir::Value* base = tensor_arg(*n, "self");
  ir::Value* src = tensor_arg(*n, "src");
  const int64_t dim = normalize_dim(int_arg(*n, "dim", 0), base->meta().rank(), *n);
  auto size = base->meta().sizes[static_cast<size_t>(dim)].as_int();
  auto index = static_int(*n, "index", 0);
  if (!size || !index) return false;
  const int64_t i = *index < 0 ? *index + *size : *index;
  KILN_CHECK(i >= 0 && i < *size, InvalidInput, "select_scatter index ", *index, " out of range for size ", *size,
             " at node '", n->name(), "'");
  Builder b(g, n);
  ir::Value* out = scatter_range(b, n, base, b.unsqueeze(src, dim), dim, i, i + 1);
  if (out == nullptr) return false;
  replace_node(g, n, {out});
  return true;
}

bool decompose_fill(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  auto sizes = size_args(g, n, x, x->meta().sizes);
  if (!sizes) return false;
  Builder b(g, n);
  const ir::Argument& value = n->arg("value");
  ir::Value* out = nullptr;
  if (value.kind() != Argument::Kind::Tensor) {
    out = b.op("aten.full.default",
               {named("size", sym_ints_argument(*sizes)), named("fill_value", value),
                named("dtype", Argument::scalar_type(x->meta().dtype), true), named("layout", Argument::none(), true),
                named("device", Argument::none(), true), named("pin_memory", Argument::none(), true)},
               n->output(0)->meta(), "full");
  } else {
    ir::Value* fill = value.as_tensor();
    if (fill->meta().rank() != 0) return false;  // fill.Tensor takes a 0-d value
    if (fill->meta().dtype != x->meta().dtype) {
      fill = b.op("aten._to_copy.default", to_copy_args(fill, x->meta().dtype),
                  with_dtype(fill->meta(), x->meta().dtype), "_to_copy");
    }
    out = b.op("aten.expand.default",
               {named("self", Argument::tensor(fill)), named("size", sym_ints_argument(*sizes)),
                named("implicit", Argument::bool_(false), true)},
               n->output(0)->meta(), "expand");
  }
  replace_node(g, n, {out});
  return true;
}

bool decompose_copy(ir::Graph& g, ir::Node* n) {
  ir::Value* self = tensor_arg(*n, "self");
  ir::Value* src = tensor_arg(*n, "src");
  if (self == nullptr || src == nullptr) return false;
  Builder b(g, n);
  ir::Value* value = src;
  if (src->meta().dtype != self->meta().dtype) {
    value = b.op("aten._to_copy.default", to_copy_args(src, self->meta().dtype),
                 with_dtype(src->meta(), self->meta().dtype), "_to_copy");
  }
  if (value->meta().sizes != self->meta().sizes) {
    auto sizes = size_args(g, n, self, self->meta().sizes);
    if (!sizes) return false;
    value = b.op("aten.expand.default",
                 {named("self", Argument::tensor(value)), named("size", sym_ints_argument(*sizes)),
                  named("implicit", Argument::bool_(false), true)},
                 with_sizes(value->meta(), self->meta().sizes), "expand");
  }
  replace_node(g, n, {value});
  return true;
}

}  // namespace kiln::lowering::detail
