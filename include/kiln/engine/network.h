#pragma once
// engine::Network: the definition of a computation as named tensors and layers (TensorRT's
// INetworkDefinition). Every add_* validates dtypes, ranks and attributes at once and throws kiln::Error
// naming the layer and the tensor, so the builder only ever sees valid networks.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/engine/dynamic_range.h"
#include "kiln/engine/layers.h"
#include "kiln/engine/weights.h"
#include "kiln/support/dtype.h"

namespace kiln::engine {

class Network;

/// A tensor of the network: a name, a dtype and dims (-1 for a dimension known only at run time).
/// Owned by its Network; pointers stay valid for the Network's lifetime.
class Tensor {
 public:
  int64_t id() const { return id_; }
  const std::string& name() const { return name_; }
  /// Renames the tensor (names must stay unique; checked when the network is built).
  void set_name(std::string name) { name_ = std::move(name); }
  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  bool is_input() const { return is_input_; }
  bool is_output() const { return is_output_; }
  /// The index of the layer producing this tensor, or -1 for a network input.
  int64_t producer() const { return producer_; }
  /// The range INT8 tactics quantize this tensor to (ITensor::setDynamicRange); throws kiln::Error naming the
  /// tensor unless the range is usable (finite, min <= max, not all zero).
  void set_dynamic_range(float min, float max);
  /// The dynamic range set, if any.
  const std::optional<DynamicRange>& dynamic_range() const { return dynamic_range_; }

 private:
  friend class Network;
  int64_t id_ = 0;
  std::string name_;
  DType dtype_ = DType::Float32;
  Dims dims_;
  bool is_input_ = false;
  bool is_output_ = false;
  int64_t producer_ = -1;
  std::optional<DynamicRange> dynamic_range_;
};

/// A layer: its kind, a unique name, input and output tensor ids, parameters and weights.
struct Layer {
  std::string name;
  LayerKind kind = LayerKind::Constant;
  std::vector<int64_t> inputs;   // tensor ids
  std::vector<int64_t> outputs;  // tensor ids
  LayerParams params;
  std::vector<Weights> weights;  // per-kind slots (see layers.h); a slot may be undefined
  /// Set only by the builder (0 in a Network): the last `format_copies` outputs are copies of output 0 in
  /// another memory format, written by the same kernel (a layer norm that also writes the E4M3 input of the
  /// FP8 matmul after it); each has output 0's dims and dtype.
  int format_copies = 0;

  template <typename P>
  const P& get() const { return std::get<P>(params); }
  template <typename P>
  P& get() { return std::get<P>(params); }
};

/// The network definition. Not thread-safe; build it on one thread.
class Network {
 public:
  Network();
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  /// A network input; dims may contain -1. Names must be unique among tensors.
  Tensor* add_input(const std::string& name, DType dtype, Dims dims);
  /// Marks a tensor as a network output (an output may not also be an input).
  void mark_output(Tensor* tensor);

  // Layer constructors. `name` names the layer (empty: "<kind>_<index>"); the output tensor is named
  // "<layer name>_out<i>" until renamed. Each validates at once and throws kiln::Error naming the layer.

  Tensor* add_constant(const std::string& name, Weights weights);
  /// Convolution; weights.kernel [O, I/groups, k...], optional bias [O]. Vectors default per spatial dim to
  /// stride 1, padding 0, dilation 1.
  Tensor* add_convolution(const std::string& name, Tensor* input, Weights kernel, Weights bias,
                          ConvolutionParams params);
  /// Transposed convolution; kernel [I, O/groups, k...], optional bias [O].
  Tensor* add_deconvolution(const std::string& name, Tensor* input, Weights kernel, Weights bias,
                            ConvolutionParams params);
  Tensor* add_matrix_multiply(const std::string& name, Tensor* a, bool transpose_a, Tensor* b, bool transpose_b);
  Tensor* add_elementwise(const std::string& name, Tensor* a, Tensor* b, ElementwiseOp op);
  Tensor* add_activation(const std::string& name, Tensor* input, ActivationKind kind, double alpha = 0.0,
                         double beta = 0.0);
  Tensor* add_unary(const std::string& name, Tensor* input, UnaryOp op);
  Tensor* add_reduce(const std::string& name, Tensor* input, ReduceOp op, std::vector<int64_t> axes,
                     bool keep_dims);
  Tensor* add_softmax(const std::string& name, Tensor* input, int64_t axis, bool log = false);
  /// Normalization; scale/bias may be undefined Weights (no affine).
  Tensor* add_normalization(const std::string& name, Tensor* input, NormalizationParams params, Weights scale,
                            Weights bias);
  /// Shuffle; `shape` (1-D Int64 shape tensor) replaces params.reshape when given.
  Tensor* add_shuffle(const std::string& name, Tensor* input, ShuffleParams params, Tensor* shape = nullptr);
  Tensor* add_concat(const std::string& name, std::vector<Tensor*> inputs, int64_t axis);
  /// Slice; start/size/stride shape tensors (1-D Int64, one entry per dim) override params when given.
  Tensor* add_slice(const std::string& name, Tensor* input, SliceParams params, Tensor* start = nullptr,
                    Tensor* size = nullptr, Tensor* stride = nullptr);
  Tensor* add_gather(const std::string& name, Tensor* data, Tensor* indices, GatherParams params);
  Tensor* add_scatter(const std::string& name, Tensor* data, Tensor* indices, Tensor* updates,
                      ScatterParams params);
  Tensor* add_pooling(const std::string& name, Tensor* input, PoolingParams params);
  Tensor* add_resize(const std::string& name, Tensor* input, ResizeParams params, Tensor* shape = nullptr);
  Tensor* add_select(const std::string& name, Tensor* condition, Tensor* then_value, Tensor* else_value);
  Tensor* add_cast(const std::string& name, Tensor* input, DType to);
  Tensor* add_shape(const std::string& name, Tensor* input);
  /// Fill; optional shape (1-D Int64), start and delta/end (0-D or [1] scalars) tensors.
  Tensor* add_fill(const std::string& name, FillParams params, Tensor* shape = nullptr, Tensor* start = nullptr,
                   Tensor* delta = nullptr);
  /// TopK; returns {values, indices}. `k` (Int64 scalar shape tensor) overrides params.k when given.
  std::pair<Tensor*, Tensor*> add_topk(const std::string& name, Tensor* input, TopKParams params,
                                       Tensor* k = nullptr);
  Tensor* add_cumulative(const std::string& name, Tensor* input, CumulativeParams params);
  Tensor* add_padding(const std::string& name, Tensor* input, PaddingParams params);
  Tensor* add_attention(const std::string& name, Tensor* q, Tensor* k, Tensor* v, Tensor* mask,
                        AttentionParams params);
  Tensor* add_nonzero(const std::string& name, Tensor* input);

  /// Appends a layer with any params (used by the builder and the plan loader). Validates and infers
  /// output dims like the typed add_* methods; returns the new layer's index.
  int64_t add_layer(Layer layer, const std::vector<DType>& output_dtypes = {});

  int64_t num_tensors() const { return static_cast<int64_t>(tensors_.size()); }
  Tensor* tensor(int64_t id) const;
  /// The tensor with this name, or nullptr.
  Tensor* find_tensor(const std::string& name) const;
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  const std::vector<int64_t>& inputs() const { return inputs_; }
  const std::vector<int64_t>& outputs() const { return outputs_; }

  /// The value of a small integer/bool tensor known while defining the network (constants, shapes of
  /// static tensors and arithmetic on them), or nullptr.
  const HostTensor* known_value(int64_t id) const;

  /// A multi-line human readable listing (for --verbose and tests).
  std::string to_string() const;

 private:
  Tensor* new_tensor(const std::string& name, DType dtype, Dims dims, int64_t producer);
  std::vector<Tensor*> finish_layer(std::unique_ptr<Layer> layer);
  std::string unique_layer_name(const std::string& name, LayerKind kind);

  std::vector<std::unique_ptr<Tensor>> tensors_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<int64_t> inputs_;
  std::vector<int64_t> outputs_;
  std::map<int64_t, HostTensor> values_;
};

}  // namespace kiln::engine
