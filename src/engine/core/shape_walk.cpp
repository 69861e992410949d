#include "engine/core/shape_walk.h"

#include <algorithm>

#include "engine/ops/reference.h"
#include "kiln/support/error.h"

namespace kiln::engine {

bool is_value_dtype(DType dtype) {
  return dtype == DType::Int64 || dtype == DType::Int32 || dtype == DType::Bool;
}

std::vector<ShapeOut> infer_layer_shapes(const Layer& layer, const std::vector<ShapeIn>& in) {
  try {
    return infer_shapes(layer, in);
  } catch (const Error& e) {
    throw Error(e.kind(), "layer '" + layer.name + "' (" + layer_kind_name(layer.kind) + "): " + e.message(),
                ErrorContext{"", layer.name, layer_kind_name(layer.kind), ""});
  }
}

Dims guessed_dims(const ShapeOut& out, const std::vector<ShapeIn>& in, DataDependentGuess guess) {
  Dims d = out.dims;
  if (out.data_dependent && guess != DataDependentGuess::Unknown && dims_known(in.at(0).dims)) {
    int64_t n = 1;
    for (int64_t x : in[0].dims) n *= x;
    d[0] = guess == DataDependentGuess::Max ? n : 0;
  }
  return d;
}

namespace {

/// A single small integer output: the only kind of tensor that gets a host value.
bool small_value(const std::vector<ShapeOut>& outs) {
  if (outs.size() != 1 || !is_value_dtype(outs[0].dtype) || !dims_known(outs[0].dims)) return false;
  int64_t n = 1;
  for (int64_t d : outs[0].dims) n *= d;
  return n <= kMaxHostValueElements;
}

std::optional<HostTensor> shape_of(const Dims& dims) {
  if (!dims_known(dims)) return std::nullopt;
  return HostTensor::from_int64s(dims, {static_cast<int64_t>(dims.size())});
}

/// The layer's input values, or nullopt when one is unknown.
std::optional<std::vector<HostTensor>> input_values(const std::vector<ShapeIn>& in) {
  std::vector<HostTensor> values;
  for (const ShapeIn& i : in) {
    if (!i.value) return std::nullopt;
    values.push_back(*i.value);
  }
  return values;
}

}  // namespace

std::optional<HostTensor> host_value(const Layer& layer, bool host, const std::vector<ShapeIn>& in,
                                     const std::vector<ShapeOut>& outs, HostValues rule) {
  if (!small_value(outs)) return std::nullopt;
  if (rule == HostValues::HostLayers) {
    if (layer.kind == LayerKind::Constant) return layer.weights[0].value;
    if (!host) return std::nullopt;
    if (layer.kind == LayerKind::Shape) return shape_of(in[0].dims);
    auto values = input_values(in);
    if (!values) return std::nullopt;
    return ops::evaluate(layer, *values).at(0);
  }
  if (layer.kind == LayerKind::Shape) return shape_of(in[0].dims);
  auto values = input_values(in);
  bool foldable = layer.kind == LayerKind::Constant ||
                  (values && layer.kind != LayerKind::NonZero && !layer.inputs.empty());
  if (!foldable) return std::nullopt;
  try {
    return ops::evaluate(layer, values ? *values : std::vector<HostTensor>{}).at(0);
  } catch (const Error&) {
    return std::nullopt;  // not evaluable now (e.g. an out-of-range index): the run will report it
  }
}

}  // namespace kiln::engine
