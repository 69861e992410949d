#include "kiln/engine/network.h"

#include <algorithm>
#include <sstream>

#include "engine/core/shape_walk.h"
#include "kiln/support/error.h"

namespace kiln::engine {
namespace {

std::vector<int64_t> normalize_axes(std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) a = normalize_axis(a, rank, "axis");
  std::sort(axes.begin(), axes.end());
  return axes;
}

Tensor* checked(Tensor* t, const char* what) {
  KILN_CHECK(t != nullptr, InvalidInput, what, " is null");
  return t;
}

}  // namespace

Network::Network() = default;
Network::~Network() = default;

Tensor* Network::new_tensor(const std::string& name, DType dtype, Dims dims, int64_t producer) {
  auto t = std::make_unique<Tensor>();
  t->id_ = static_cast<int64_t>(tensors_.size());
  t->name_ = name;
  t->dtype_ = dtype;
  t->dims_ = std::move(dims);
  t->producer_ = producer;
  tensors_.push_back(std::move(t));
  return tensors_.back().get();
}

void Tensor::set_dynamic_range(float min, float max) {
  const DynamicRange range{min, max};
  KILN_CHECK(range.usable(), InvalidInput, "tensor '", name_, "': dynamic range [", min, ", ", max,
             "] is not usable (need finite min <= max, not both 0)");
  dynamic_range_ = range;
}

Tensor* Network::tensor(int64_t id) const {
  KILN_CHECK(id >= 0 && id < num_tensors(), InvalidInput, "tensor id ", id, " out of range");
  return tensors_[id].get();
}

Tensor* Network::find_tensor(const std::string& name) const {
  for (const auto& t : tensors_) {
    if (t->name() == name) return t.get();
  }
  return nullptr;
}

const HostTensor* Network::known_value(int64_t id) const {
  auto it = values_.find(id);
  return it == values_.end() ? nullptr : &it->second;
}

Tensor* Network::add_input(const std::string& name, DType dtype, Dims dims) {
  KILN_CHECK(!name.empty(), InvalidInput, "network input needs a name");
  KILN_CHECK(find_tensor(name) == nullptr, InvalidInput, "tensor name '", name, "' already used");
  for (int64_t d : dims) KILN_CHECK(d >= -1, InvalidInput, "input '", name, "' has invalid dim ", d);
  Tensor* t = new_tensor(name, dtype, std::move(dims), -1);
  t->is_input_ = true;
  inputs_.push_back(t->id());
  return t;
}

void Network::mark_output(Tensor* tensor) {
  KILN_CHECK(tensor != nullptr && tensor->id() < num_tensors() && tensors_[tensor->id()].get() == tensor, InvalidInput,
             "mark_output: tensor does not belong to this network");
  KILN_CHECK(!tensor->is_input(), InvalidInput, "mark_output: '", tensor->name(), "' is a network input");
  if (tensor->is_output_) return;
  tensor->is_output_ = true;
  outputs_.push_back(tensor->id());
}

std::string Network::unique_layer_name(const std::string& name, LayerKind kind) {
  std::string base = name.empty() ? std::string(layer_kind_name(kind)) + "_" + std::to_string(layers_.size()) : name;
  return base;
}

std::vector<Tensor*> Network::finish_layer(std::unique_ptr<Layer> layer) {
  std::vector<ShapeIn> in;
  for (int64_t id : layer->inputs) {
    KILN_CHECK(id >= 0 && id < num_tensors(), InvalidInput, "layer '", layer->name, "': input tensor id ", id,
               " out of range");
    const Tensor* t = tensors_[id].get();
    in.push_back({t->dtype(), t->dims(), known_value(id)});
  }
  std::vector<ShapeOut> outs = infer_layer_shapes(*layer, in);
  int64_t index = static_cast<int64_t>(layers_.size());
  std::vector<Tensor*> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor* t = new_tensor(layer->name + "_out" + std::to_string(i), outs[i].dtype, outs[i].dims, index);
    layer->outputs.push_back(t->id());
    result.push_back(t);
  }
  // Small integer values (shape arithmetic) are tracked so later layers see exact dims where possible.
  if (auto v = host_value(*layer, false, in, outs, HostValues::Fold))
    values_[result[0]->id()] = std::move(*v);
  layers_.push_back(std::move(layer));
  return result;
}

int64_t Network::add_layer(Layer layer, const std::vector<DType>& output_dtypes) {
  auto l = std::make_unique<Layer>(std::move(layer));
  l->name = unique_layer_name(l->name, l->kind);
  KILN_CHECK(params_kind(l->params) == l->kind, InvalidInput, "layer '", l->name, "': params do not match kind ",
             layer_kind_name(l->kind));
  KILN_CHECK(l->format_copies == 0, InvalidInput, "layer '", l->name,
             "': format copies are the builder's (Layer::format_copies must be 0 in a network)");
  l->outputs.clear();
  auto outs = finish_layer(std::move(l));
  for (size_t i = 0; i < outs.size() && i < output_dtypes.size(); ++i) outs[i]->dtype_ = output_dtypes[i];
  return static_cast<int64_t>(layers_.size()) - 1;
}

namespace {
std::unique_ptr<Layer> make_layer(LayerKind kind, LayerParams params, std::vector<Tensor*> inputs,
                                  std::vector<Weights> weights = {}) {
  auto l = std::make_unique<Layer>();
  l->kind = kind;
  l->params = std::move(params);
  for (Tensor* t : inputs) l->inputs.push_back(checked(t, "input tensor")->id());
  l->weights = std::move(weights);
  return l;
}
}  // namespace

#define KILN_NAMED(l, name, kind) l->name = unique_layer_name(name, kind)

Tensor* Network::add_constant(const std::string& name, Weights weights) {
  KILN_CHECK(weights.defined(), InvalidInput, "constant '", name, "' has undefined weights");
  auto l = make_layer(LayerKind::Constant, ConstantParams{}, {}, {std::move(weights)});
  KILN_NAMED(l, name, LayerKind::Constant);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_convolution(const std::string& name, Tensor* input, Weights kernel, Weights bias,
                                 ConvolutionParams params) {
  params.transposed = false;
  auto l = make_layer(LayerKind::Convolution, params, {input}, {std::move(kernel), std::move(bias)});
  KILN_NAMED(l, name, LayerKind::Convolution);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_deconvolution(const std::string& name, Tensor* input, Weights kernel, Weights bias,
                                   ConvolutionParams params) {
  params.transposed = true;
  auto l = make_layer(LayerKind::Convolution, params, {input}, {std::move(kernel), std::move(bias)});
  KILN_NAMED(l, name, LayerKind::Convolution);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_matrix_multiply(const std::string& name, Tensor* a, bool transpose_a, Tensor* b,
                                     bool transpose_b) {
  auto l = make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{transpose_a, transpose_b, {}}, {a, b});
  KILN_NAMED(l, name, LayerKind::MatrixMultiply);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_elementwise(const std::string& name, Tensor* a, Tensor* b, ElementwiseOp op) {
  auto l = make_layer(LayerKind::Elementwise, ElementwiseParams{op}, {a, b});
  KILN_NAMED(l, name, LayerKind::Elementwise);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_activation(const std::string& name, Tensor* input, ActivationKind kind, double alpha,
                                double beta) {
  auto l = make_layer(LayerKind::Activation, ActivationParams{kind, alpha, beta}, {input});
  KILN_NAMED(l, name, LayerKind::Activation);
  if (kind == ActivationKind::Clip) {
    KILN_CHECK(alpha <= beta, InvalidInput, "layer '", l->name, "': clip min ", alpha, " > max ", beta);
  }
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_unary(const std::string& name, Tensor* input, UnaryOp op) {
  auto l = make_layer(LayerKind::Unary, UnaryParams{op}, {input});
  KILN_NAMED(l, name, LayerKind::Unary);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_reduce(const std::string& name, Tensor* input, ReduceOp op, std::vector<int64_t> axes,
                            bool keep_dims) {
  checked(input, "input");
  std::string n = unique_layer_name(name, LayerKind::Reduce);
  try {
    axes = normalize_axes(std::move(axes), input->rank());
  } catch (const Error& e) {
    KILN_FAIL(InvalidInput, "layer '", n, "' (reduce): ", e.message());
  }
  auto l = make_layer(LayerKind::Reduce, ReduceParams{op, axes, keep_dims}, {input});
  l->name = n;
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_softmax(const std::string& name, Tensor* input, int64_t axis, bool log) {
  checked(input, "input");
  auto l = make_layer(LayerKind::Softmax, SoftmaxParams{axis < 0 ? axis + input->rank() : axis, log}, {input});
  KILN_NAMED(l, name, LayerKind::Softmax);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_normalization(const std::string& name, Tensor* input, NormalizationParams params,
                                   Weights scale, Weights bias) {
  checked(input, "input");
  if (params.axis < 0) params.axis += input->rank();
  auto l = make_layer(LayerKind::Normalization, params, {input}, {std::move(scale), std::move(bias)});
  KILN_NAMED(l, name, LayerKind::Normalization);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_shuffle(const std::string& name, Tensor* input, ShuffleParams params, Tensor* shape) {
  std::vector<Tensor*> in = {input};
  if (shape) {
    in.push_back(shape);
    params.has_reshape = true;
  }
  auto l = make_layer(LayerKind::Shuffle, params, in);
  KILN_NAMED(l, name, LayerKind::Shuffle);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_concat(const std::string& name, std::vector<Tensor*> inputs, int64_t axis) {
  KILN_CHECK(!inputs.empty(), InvalidInput, "concat '", name, "' has no inputs");
  checked(inputs[0], "input 0");
  if (axis < 0) axis += inputs[0]->rank();
  auto l = make_layer(LayerKind::Concat, ConcatParams{axis}, inputs);
  KILN_NAMED(l, name, LayerKind::Concat);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_slice(const std::string& name, Tensor* input, SliceParams params, Tensor* start, Tensor* size,
                           Tensor* stride) {
  std::vector<Tensor*> in = {input};
  if (start || size || stride) {
    KILN_CHECK(start != nullptr, InvalidInput, "slice '", name, "': dynamic size/stride need a start tensor too");
    in.push_back(start);
    if (size || stride) {
      KILN_CHECK(size != nullptr, InvalidInput, "slice '", name, "': a stride tensor needs a size tensor too");
      in.push_back(size);
    }
    if (stride) in.push_back(stride);
  }
  auto l = make_layer(LayerKind::Slice, params, in);
  KILN_NAMED(l, name, LayerKind::Slice);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_gather(const std::string& name, Tensor* data, Tensor* indices, GatherParams params) {
  checked(data, "data");
  if (params.axis < 0) params.axis += data->rank();
  auto l = make_layer(LayerKind::Gather, params, {data, indices});
  KILN_NAMED(l, name, LayerKind::Gather);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_scatter(const std::string& name, Tensor* data, Tensor* indices, Tensor* updates,
                             ScatterParams params) {
  checked(data, "data");
  if (params.axis < 0) params.axis += data->rank();
  auto l = make_layer(LayerKind::Scatter, params, {data, indices, updates});
  KILN_NAMED(l, name, LayerKind::Scatter);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_pooling(const std::string& name, Tensor* input, PoolingParams params) {
  auto l = make_layer(LayerKind::Pooling, params, {input});
  KILN_NAMED(l, name, LayerKind::Pooling);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_resize(const std::string& name, Tensor* input, ResizeParams params, Tensor* shape) {
  std::vector<Tensor*> in = {input};
  if (shape) in.push_back(shape);
  auto l = make_layer(LayerKind::Resize, params, in);
  KILN_NAMED(l, name, LayerKind::Resize);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_select(const std::string& name, Tensor* condition, Tensor* then_value, Tensor* else_value) {
  auto l = make_layer(LayerKind::Select, SelectParams{}, {condition, then_value, else_value});
  KILN_NAMED(l, name, LayerKind::Select);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_cast(const std::string& name, Tensor* input, DType to) {
  auto l = make_layer(LayerKind::Cast, CastParams{to}, {input});
  KILN_NAMED(l, name, LayerKind::Cast);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_shape(const std::string& name, Tensor* input) {
  auto l = make_layer(LayerKind::Shape, ShapeParams{}, {input});
  KILN_NAMED(l, name, LayerKind::Shape);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_fill(const std::string& name, FillParams params, Tensor* shape, Tensor* start, Tensor* delta) {
  std::vector<Tensor*> in;
  KILN_CHECK(!(start || delta) || shape, InvalidInput, "fill '", name,
             "': start/delta tensors need a shape tensor too (make one with a constant)");
  KILN_CHECK(!delta || start, InvalidInput, "fill '", name, "': a delta tensor needs a start tensor too");
  if (shape) in.push_back(shape);
  if (start) in.push_back(start);
  if (delta) in.push_back(delta);
  auto l = make_layer(LayerKind::Fill, params, in);
  KILN_NAMED(l, name, LayerKind::Fill);
  return finish_layer(std::move(l))[0];
}

std::pair<Tensor*, Tensor*> Network::add_topk(const std::string& name, Tensor* input, TopKParams params, Tensor* k) {
  checked(input, "input");
  if (params.axis < 0) params.axis += input->rank();
  std::vector<Tensor*> in = {input};
  if (k) in.push_back(k);
  auto l = make_layer(LayerKind::TopK, params, in);
  KILN_NAMED(l, name, LayerKind::TopK);
  auto outs = finish_layer(std::move(l));
  return {outs[0], outs[1]};
}

Tensor* Network::add_cumulative(const std::string& name, Tensor* input, CumulativeParams params) {
  checked(input, "input");
  if (params.axis < 0) params.axis += input->rank();
  auto l = make_layer(LayerKind::Cumulative, params, {input});
  KILN_NAMED(l, name, LayerKind::Cumulative);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_padding(const std::string& name, Tensor* input, PaddingParams params) {
  auto l = make_layer(LayerKind::Padding, params, {input});
  KILN_NAMED(l, name, LayerKind::Padding);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_attention(const std::string& name, Tensor* q, Tensor* k, Tensor* v, Tensor* mask,
                               AttentionParams params) {
  std::vector<Tensor*> in = {q, k, v};
  params.has_mask = mask != nullptr;
  if (mask) in.push_back(mask);
  auto l = make_layer(LayerKind::Attention, params, in);
  KILN_NAMED(l, name, LayerKind::Attention);
  return finish_layer(std::move(l))[0];
}

Tensor* Network::add_nonzero(const std::string& name, Tensor* input) {
  auto l = make_layer(LayerKind::NonZero, NonZeroParams{}, {input});
  KILN_NAMED(l, name, LayerKind::NonZero);
  return finish_layer(std::move(l))[0];
}

std::string Network::to_string() const {
  std::ostringstream out;
  auto dims = [](const Dims& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
  };
  for (int64_t id : inputs_) {
    const Tensor* t = tensors_[id].get();
    out << "input " << t->name() << ": " << dtype_name(t->dtype()) << dims(t->dims()) << "\n";
  }
  for (const auto& l : layers_) {
    out << l->name << " = " << layer_kind_name(l->kind) << "(";
    for (size_t i = 0; i < l->inputs.size(); ++i) out << (i ? ", " : "") << tensors_[l->inputs[i]]->name();
    out << ") -> ";
    for (size_t i = 0; i < l->outputs.size(); ++i) {
      const Tensor* t = tensors_[l->outputs[i]].get();
      out << (i ? ", " : "") << t->name() << ": " << dtype_name(t->dtype()) << dims(t->dims());
    }
    out << "\n";
  }
  for (int64_t id : outputs_) out << "output " << tensors_[id]->name() << "\n";
  return out.str();
}

}  // namespace kiln::engine
