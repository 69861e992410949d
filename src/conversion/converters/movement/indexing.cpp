// Slicing and indexing: slice, select, cat, split / split_with_sizes / chunk, index_select, gather, embedding,
// index.Tensor (one index tensor), constant_pad_nd.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

std::optional<int64_t> opt_int(const ConverterArgs& a, const char* name) {
  const ir::Argument* v = a.raw(name);
  if (v == nullptr || v->is_none()) return std::nullopt;
  return a.int_(name);
}

Outputs slice(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::slice(ctx, a.tensor(ctx, "self"), a.int_("dim", 0), opt_int(a, "start"), opt_int(a, "end"),
                      a.int_("step", 1))};
}

Outputs select(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::select(ctx, a.tensor(ctx, "self"), a.int_("dim"), a.int_("index"))};
}

Outputs cat(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  std::vector<engine::Tensor*> xs;
  for (const ArgValue& v : a.list("tensors")) xs.push_back(ConverterArgs::materialize(ctx, v, "cat input"));
  return {impl::cat(ctx, xs, a.int_("dim", 0))};
}

Outputs split_with_sizes(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return impl::split(ctx, a.tensor(ctx, "self"), a.ints("split_sizes"), a.int_("dim", 0));
}

Outputs split(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const int64_t dim = impl::normalize_dim(a.int_("dim", 0), x->rank(), ctx.current_node);
  const int64_t n = x->dims()[dim];
  const int64_t piece = a.int_("split_size");
  KILN_CHECK(n >= 0 && piece > 0, Unsupported, ctx.current_node, ": split of a dynamic dim");
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < n; at += piece) sizes.push_back(std::min(piece, n - at));
  return impl::split(ctx, x, sizes, dim);
}

Outputs chunk(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const int64_t dim = impl::normalize_dim(a.int_("dim", 0), x->rank(), ctx.current_node);
  const int64_t n = x->dims()[dim];
  const int64_t chunks = a.int_("chunks");
  KILN_CHECK(n >= 0 && chunks > 0, Unsupported, ctx.current_node, ": chunk of a dynamic dim");
  const int64_t piece = (n + chunks - 1) / chunks;
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < n; at += piece) sizes.push_back(std::min(piece, n - at));
  return impl::split(ctx, x, sizes, dim);
}

Outputs index_select(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::index_select(ctx, a.tensor(ctx, "self"), a.int_("dim"), a.tensor(ctx, "index"))};
}

Outputs gather(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::gather_elements(ctx, a.tensor(ctx, "self"), a.int_("dim"), a.tensor(ctx, "index"))};
}

Outputs embedding(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::index_select(ctx, a.tensor(ctx, "weight"), 0, a.tensor(ctx, "indices"))};
}

// x[..., idx, ...] with exactly one index tensor (the others None, i.e. full slices before it).
Outputs index_tensor(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  std::vector<ArgValue> idx = a.list("indices");
  int64_t dim = -1;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (!idx[i].is_none()) dim = static_cast<int64_t>(i);
  }
  KILN_CHECK(dim >= 0, InvalidInput, ctx.current_node, ": index with no index tensor");
  engine::Tensor* i = ConverterArgs::materialize(ctx, idx[dim], "index");
  KILN_CHECK(i->dtype() != DType::Bool, Unsupported, ctx.current_node, ": boolean mask indexing");
  return {impl::index_select(ctx, a.tensor(ctx, "self"), dim, i)};
}

bool one_integer_index(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* a = n.find_arg("indices");
  if (a == nullptr) return false;
  int count = 0;
  for (const ir::Value* v : a->as_tensors()) {
    if (v == nullptr) continue;
    ++count;
    if (v->is_tensor() && v->meta().dtype == DType::Bool) return false;
  }
  return count == 1;
}

Outputs constant_pad(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::pad(ctx, a.tensor(ctx, "self"), a.ints("pad"), a.float_("value", 0.0))};
}

Outputs stack(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  std::vector<engine::Tensor*> xs;
  for (const ArgValue& v : a.list("tensors")) xs.push_back(ConverterArgs::materialize(ctx, v, "stack input"));
  KILN_CHECK(!xs.empty(), InvalidInput, ctx.current_node, ": stack of no tensors");
  const int64_t dim = impl::normalize_dim(a.int_("dim", 0), xs[0]->rank() + 1, ctx.current_node);
  for (auto*& x : xs) x = impl::unsqueeze(ctx, x, dim);
  return {impl::cat(ctx, xs, dim)};
}

Outputs pad_mode(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  using M = engine::PaddingParams::Mode;
  const std::string& op = n.target().name;
  std::string mode = a.string("mode", "constant");
  if (op.rfind("reflection_pad", 0) == 0) mode = "reflect";
  if (op.rfind("replication_pad", 0) == 0) mode = "replicate";
  const M m = mode == "reflect" ? M::Reflect : mode == "replicate" ? M::Replicate : mode == "circular" ? M::Circular
                                                                                                      : M::Constant;
  KILN_CHECK(mode == "constant" || m != M::Constant, InvalidInput, ctx.current_node, ": pad mode '", mode, "'");
  const char* pads = a.raw("pad") ? "pad" : "padding";
  return {impl::pad(ctx, a.tensor(ctx, "self"), a.ints(pads), m == M::Constant ? a.float_("value", 0.0) : 0.0, m)};
}

// Repeat: broadcast each dim against a new leading axis, then merge (x [a, b], repeats [r, s] -> [r*a, s*b]).
Outputs repeat(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const std::vector<int64_t> reps = a.ints("repeats");
  KILN_CHECK(static_cast<int64_t>(reps.size()) >= x->rank(), InvalidInput, ctx.current_node,
             ": repeat with fewer repeats than dims");
  const int64_t r = static_cast<int64_t>(reps.size());
  std::vector<SymIntValue> lifted(static_cast<size_t>(r - x->rank()), SymIntValue{1, nullptr});
  for (const SymIntValue& d : impl::dims_of(ctx, x)) lifted.push_back(d);
  x = impl::reshape(ctx, x, lifted);
  // [d0, d1, ...] -> [1, d0, 1, d1, ...] -> expand [r0, d0, r1, d1, ...] -> reshape [r0*d0, r1*d1, ...]
  std::vector<SymIntValue> inter, expanded, merged;
  for (int64_t i = 0; i < r; ++i) {
    inter.push_back(SymIntValue{1, nullptr});
    inter.push_back(lifted[i]);
    expanded.push_back(SymIntValue{reps[i], nullptr});
    expanded.push_back(lifted[i]);
    merged.push_back(impl::sym_int_arith(ctx, SymIntValue{reps[i], nullptr}, lifted[i], engine::ElementwiseOp::Mul));
  }
  x = impl::reshape(ctx, x, inter);
  x = impl::expand(ctx, x, expanded);
  return {impl::reshape(ctx, x, merged)};
}

// Slicing bounds must be build-time constants.
bool static_bounds(const ir::Node& n, const settings::CompilationSettings&) {
  for (const char* k : {"start", "end", "step", "index", "dim"}) {
    const ir::Argument* a = n.find_arg(k);
    if (a && a->kind() == ir::Argument::Kind::SymInt && a->as_sym_int().is_value()) {
      const auto& sv = a->as_sym_int().value->sym_value();
      if (!sv || !sv->is_constant()) return false;
    }
  }
  return true;
}

}  // namespace

void register_indexing_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.slice.Tensor"}, slice, true, static_bounds);
  add(r, {"aten.select.int"}, select, true, static_bounds);
  add(r, {"aten.cat.default", "aten.concat.default"}, cat, true);
  add(r, {"aten.split_with_sizes.default"}, split_with_sizes, true);
  add(r, {"aten.split.Tensor"}, split, false);
  add(r, {"aten.chunk.default"}, chunk, false);
  add(r, {"aten.index_select.default"}, index_select, true);
  add(r, {"aten.gather.default"}, gather, true);
  add(r, {"aten.embedding.default"}, embedding, true);
  add(r, {"aten.index.Tensor"}, index_tensor, true, one_integer_index);
  add(r, {"aten.constant_pad_nd.default"}, constant_pad, true);
  add(r, {"aten.stack.default"}, stack, true);
  add(r, {"aten.pad.default", "aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
          "aten.replication_pad1d.default", "aten.replication_pad2d.default"},
      pad_mode, true);
  add(r, {"aten.repeat.default"}, repeat, true);
}

}  // namespace kiln::conversion
