#pragma once
// Zero-size tensors (legal in torch: a batch of 0, a slice s - s, floordiv(1, 2)) never reach a kernel library.
// oneDNN, cuBLASLt and cuDNN divide by dims when they create primitives, so the engine core keeps every
// kernel away from them in one place:
//   - a layer whose tensors can all hold data at the profile's max shapes gets a kernel created and timed at
//     the opt shape, or at the max shape where the opt shape is empty (layer_info_for_kernels);
//   - a layer some tensor of which is empty even at the max shapes gets no kernel at all (tactic kEmptyTactic);
//   - at execute, a layer with an empty input or output is not handed to its kernel (run_zero_volume): when
//     every output is empty there is nothing to write; otherwise (a matrix multiply over K = 0, a sum over an
//     empty axis) the layer runs on the reference implementation, on the host.

#include "engine/core/plan_impl.h"

namespace kiln::engine {

/// The tactic name of a layer that has an empty tensor at every shape of the profile (no kernel).
inline constexpr const char* kEmptyTactic = "empty";

/// Whether `dims` has a zero (no elements).
bool is_empty_dims(const Dims& dims);

/// Whether some input or output of layer `li` is empty at the max shapes of profile 0.
bool always_empty(const Plan::Impl& plan, int64_t li);

/// Whether some tensor in `views` is empty.
bool any_empty(const std::vector<TensorView>& views);

/// Runs layer `layer` whose args hold an empty input or output without its kernel: nothing when every output
/// is empty, else the reference implementation on the host (staging device buffers through host memory and
/// waiting for `args.stream`). Non-Plain formats of non-empty tensors are kiln::Error(Unsupported).
void run_zero_volume(const Backend& backend, const Layer& layer, KernelArgs& args);

}  // namespace kiln::engine
