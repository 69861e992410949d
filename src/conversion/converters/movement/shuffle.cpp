// View and layout ops: reshape/view, permute/transpose (and swapaxes, swapdims, movedim, moveaxis, t, adjoint, mT,
// numpy_T), squeeze/unsqueeze, flatten/unflatten, expand,
// contiguous/clone/alias, _to_copy (cast), pixel_shuffle.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

Outputs reshape(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  const char* key = a.raw("shape") ? "shape" : "size";
  return {impl::reshape(ctx, a.tensor(ctx, "self"), a.sym_ints(ctx, key))};
}

Outputs permute(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::permute(ctx, a.tensor(ctx, "self"), a.ints("dims"))};
}

// Swaps two dims: transpose.int (dim0, dim1), swapaxes (axis0, axis1), swapdims (dim0, dim1), t (0, 1; rank < 2 is
// the identity), adjoint/mT/mH/matrix_H (the last two dims; real tensors only, so no conjugation).
Outputs transpose(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  if (x->rank() < 2) return {impl::identity(ctx, x)};
  const std::string& op = n.target().name;
  int64_t d0 = 0, d1 = 1;
  if (op == "adjoint" || op == "mT" || op == "mH" || op == "matrix_H") {
    d0 = -2;
    d1 = -1;
  } else if (op == "swapaxes") {
    d0 = a.int_("axis0");
    d1 = a.int_("axis1");
  } else if (op != "t") {
    d0 = a.int_("dim0");
    d1 = a.int_("dim1");
  }
  d0 = impl::normalize_dim(d0, x->rank(), ctx.current_node);
  d1 = impl::normalize_dim(d1, x->rank(), ctx.current_node);
  std::vector<int64_t> perm(static_cast<size_t>(x->rank()));
  for (int64_t i = 0; i < x->rank(); ++i) perm[i] = i;
  std::swap(perm[d0], perm[d1]);
  return {impl::permute(ctx, x, perm)};
}

// numpy_T: every dim reversed.
Outputs reverse_dims(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  std::vector<int64_t> perm;
  for (int64_t i = x->rank() - 1; i >= 0; --i) perm.push_back(i);
  return {impl::permute(ctx, x, perm)};
}

// movedim / moveaxis (int and int-list forms): the source dims go to the destination positions, the other dims
// keep their order in the remaining positions.
Outputs movedim(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const int64_t rank = x->rank();
  std::vector<int64_t> src = a.ints("source"), dst = a.ints("destination");
  KILN_CHECK(src.size() == dst.size(), InvalidInput, ctx.current_node, ": movedim with ", src.size(),
             " source dims and ", dst.size(), " destinations");
  std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
  std::vector<bool> moved(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < src.size(); ++i) {
    const int64_t s = impl::normalize_dim(src[i], rank, ctx.current_node);
    const int64_t d = impl::normalize_dim(dst[i], rank, ctx.current_node);
    KILN_CHECK(perm[d] < 0 && !moved[s], InvalidInput, ctx.current_node, ": movedim repeats a dim");
    perm[d] = s;
    moved[s] = true;
  }
  int64_t next = 0;
  for (int64_t& p : perm) {
    if (p >= 0) continue;
    while (moved[next]) ++next;
    p = next++;
  }
  return {impl::permute(ctx, x, perm)};
}

Outputs unsqueeze(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  return {impl::unsqueeze(ctx, x, impl::normalize_dim(a.int_("dim"), x->rank() + 1, ctx.current_node))};
}

Outputs squeeze(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  std::vector<int64_t> dims;
  if (a.raw("dim")) {
    dims = a.ints("dim");  // squeeze.dim (Int) and squeeze.dims (Ints) both name it "dim"
  } else {
    for (int64_t i = 0; i < x->rank(); ++i) dims.push_back(i);
  }
  return {impl::squeeze(ctx, x, dims)};
}

Outputs flatten(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::flatten(ctx, a.tensor(ctx, "self"), a.int_("start_dim", 0), a.int_("end_dim", -1))};
}

Outputs unflatten(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const int64_t dim = impl::normalize_dim(a.int_("dim"), x->rank(), ctx.current_node);
  std::vector<SymIntValue> in = impl::dims_of(ctx, x), out;
  for (int64_t i = 0; i < dim; ++i) out.push_back(in[i]);
  for (const SymIntValue& s : a.sym_ints(ctx, "sizes")) out.push_back(s);
  for (int64_t i = dim + 1; i < x->rank(); ++i) out.push_back(in[i]);
  return {impl::reshape(ctx, x, out)};
}

Outputs expand(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::expand(ctx, a.tensor(ctx, "self"), a.sym_ints(ctx, "size"))};
}

Outputs copy(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const DType t = detail::out_dtype(n);
  return {x->dtype() == t ? impl::identity(ctx, x) : impl::cast(ctx, x, t)};
}

Outputs pixel_shuffle(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const int64_t r = a.int_("upscale_factor");
  KILN_CHECK(x->rank() == 4, Unsupported, ctx.current_node, ": pixel_shuffle of a rank-", x->rank(), " tensor");
  std::vector<SymIntValue> d = impl::dims_of(ctx, x);
  const SymIntValue rr{r, nullptr}, r2{r * r, nullptr};
  // [N, C*r*r, H, W] -> [N, C, r, r, H, W] -> [N, C, H, r, W, r] -> [N, C, H*r, W*r]
  SymIntValue c = impl::sym_int_arith(ctx, d[1], r2, engine::ElementwiseOp::FloorDiv);
  engine::Tensor* y = impl::reshape(ctx, x, {d[0], c, rr, rr, d[2], d[3]});
  y = impl::permute(ctx, y, {0, 1, 4, 2, 5, 3});
  return {impl::reshape(ctx, y,
                        {d[0], c, impl::sym_int_arith(ctx, d[2], rr, engine::ElementwiseOp::Mul),
                         impl::sym_int_arith(ctx, d[3], rr, engine::ElementwiseOp::Mul)})};
}

}  // namespace

void register_shuffle_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.reshape.default", "aten.view.default", "aten._unsafe_view.default"}, reshape, true);
  add(r, {"aten.permute.default"}, permute, true);
  add(r, {"aten.transpose.int", "aten.t.default", "aten.swapaxes.default", "aten.swapdims.default",
          "aten.adjoint.default", "aten.mT.default", "aten.mH.default", "aten.matrix_H.default"},
      transpose, true);
  add(r, {"aten.numpy_T.default"}, reverse_dims, true);
  add(r, {"aten.movedim.int", "aten.movedim.intlist", "aten.moveaxis.int", "aten.moveaxis.intlist"}, movedim, true);
  add(r, {"aten.unsqueeze.default"}, unsqueeze, true);
  add(r, {"aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default"}, squeeze, true);
  add(r, {"aten.flatten.using_ints"}, flatten, true);
  add(r, {"aten.unflatten.int"}, unflatten, true);
  add(r, {"aten.expand.default"}, expand, true);
  add(r, {"aten.contiguous.default", "aten.clone.default", "aten.alias.default", "aten._to_copy.default",
          "aten.to.dtype", "aten.detach.default"},
      copy, true);
  add(r, {"aten.pixel_shuffle.default"}, pixel_shuffle, true);
}

}  // namespace kiln::conversion
