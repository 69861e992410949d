#pragma once
// The one step of every shape walk over layers: a layer's inputs (dims, and host values where known) ->
// infer_shapes -> its output dims -> the host value of a small integer output. Three walks take it:
// Network::finish_layer (as layers are added; dims may be -1), infer_concrete (plan shapes for given input
// dims: profile ranges, tactic timing, set_input_shape) and ExecutionContext's run (every run, with kernels
// between).

#include <optional>
#include <vector>

#include "engine/ops/shape_inference.h"
#include "kiln/engine/network.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine {

/// The most elements a host value (a shape tensor: dims, starts, sizes, a fill scalar) has. Only shape inputs
/// are ever read as host values (shape inference's shape_value, kernels' KernelArgs::input_values, host-layer
/// evaluation), and the builder makes a layer a host layer only when its output is 0-D/1-D with at most this
/// many elements (a shape has one entry per dim, far fewer than 64), so no larger value is kept.
constexpr int64_t kMaxHostValueElements = 64;

/// Integer dtypes whose values shape tensors carry.
bool is_value_dtype(DType dtype);

/// infer_shapes for `layer`; an error is rethrown naming the layer and its kind.
std::vector<ShapeOut> infer_layer_shapes(const Layer& layer, const std::vector<ShapeIn>& in);

/// What a walk assumes for the count of a data-dependent dim (nonzero's) before the data exists: unknown
/// (-1), none selected (0), or every element of the layer's first input selected (its numel, the arena's
/// size).
enum class DataDependentGuess { Unknown, Min, Max };

/// The dims of output `out` of a layer with inputs `in` after applying `guess` to a data-dependent leading
/// dim (when the first input's dims are known).
Dims guessed_dims(const ShapeOut& out, const std::vector<ShapeIn>& in, DataDependentGuess guess);

/// Which layers a walk gives host values to.
enum class HostValues {
  /// Network: any layer whose output is a small integer tensor computable now (a Shape of known dims, an
  /// integer
  /// Constant, a layer other than NonZero whose inputs all have values), so later layers see exact dims. A
  /// layer
  /// the reference cannot evaluate yet (an out-of-range index) keeps no value: the run reports it.
  Fold,
  /// Plan and execution: the layers the builder marked host (PlanLayer::host) and small integer Constants.
  /// Host layers are evaluated; an evaluation error is the walk's error.
  HostLayers,
};

/// The host value of `layer`'s output under `rule` (`host`: the builder marked the layer host), or nullopt.
/// `in` are the layer's inputs as infer_layer_shapes saw them, `outs` its result.
std::optional<HostTensor> host_value(const Layer& layer, bool host, const std::vector<ShapeIn>& in,
                                     const std::vector<ShapeOut>& outs, HostValues rule);

}  // namespace kiln::engine
