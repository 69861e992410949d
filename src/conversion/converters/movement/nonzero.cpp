// Ops whose output shape depends on the data: nonzero, argwhere and masked_select, through the engine's
// NonZero layer. They are registered with requires_output_allocator: a network output of unknown shape is
// collected by an engine::OutputAllocator (the compiled module binds one to every data-dependent output);
// layers after the NonZero inside the same engine see its actual count at run time.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

// nonzero / argwhere: Int64 [count, rank], the indices of the non-zero elements in row-major order.
Outputs nonzero(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {ctx.net.add_nonzero(ctx.name("nonzero"), a.tensor(ctx, "self"))};
}

// The broadcast shape of a and b (a dynamic dim against a static one other than 1 is taken to be that one).
std::vector<SymIntValue> broadcast_dims(ConversionContext& ctx, engine::Tensor* a, engine::Tensor* b) {
  std::vector<SymIntValue> da = impl::dims_of(ctx, a), db = impl::dims_of(ctx, b);
  const size_t r = std::max(da.size(), db.size());
  da.insert(da.begin(), r - da.size(), SymIntValue{1, nullptr});
  db.insert(db.begin(), r - db.size(), SymIntValue{1, nullptr});
  std::vector<SymIntValue> out;
  for (size_t i = 0; i < r; ++i) {
    const bool a_one = da[i].is_static() && *da[i].value == 1;
    const bool b_one = db[i].is_static() && *db[i].value == 1;
    out.push_back(a_one ? db[i] : b_one || da[i].is_static() ? da[i] : db[i]);
  }
  return out;
}

// masked_select(self, mask): the elements of self (broadcast with mask) where mask is true, flattened:
// self.flatten()[nonzero(mask.flatten())].
Outputs masked_select(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  engine::Tensor* mask = a.tensor(ctx, "mask");
  const std::vector<SymIntValue> shape = broadcast_dims(ctx, x, mask);
  if (x->dims() != mask->dims()) {
    x = impl::expand(ctx, x, shape);
    mask = impl::expand(ctx, mask, shape);
  }
  engine::Tensor* flat_x = impl::flatten(ctx, x, 0, -1);
  engine::Tensor* where = ctx.net.add_nonzero(ctx.name("nonzero"), impl::flatten(ctx, mask, 0, -1));
  engine::Tensor* index = impl::reshape(ctx, where, {SymIntValue{-1, nullptr}});
  return {impl::index_select(ctx, flat_x, 0, index)};
}

bool bool_mask(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* m = n.find_arg("mask");
  return m != nullptr && m->kind() == ir::Argument::Kind::Tensor &&
         m->as_tensor()->meta().dtype == DType::Bool;
}

void add_data_dependent(ConverterRegistry& r, std::initializer_list<const char*> keys, detail::Fn fn,
                        CapabilityValidator validator = {}) {
  for (const char* k : keys) {
    RegistrationOptions o;
    o.supports_dynamic_shapes = true;
    o.requires_output_allocator = true;
    o.capability_validator = validator;
    r.register_converter(k, ConverterImpl(fn), o);
  }
}

}  // namespace

void register_nonzero_converters(ConverterRegistry& r) {
  add_data_dependent(r, {"aten.nonzero.default", "aten.argwhere.default"}, nonzero);
  add_data_dependent(r, {"aten.masked_select.default"}, masked_select, bool_mask);
}

}  // namespace kiln::conversion
