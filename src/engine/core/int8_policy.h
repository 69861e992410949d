#pragma once
// Which layers of a build may take INT8 or FP8 tactics (BuilderConfig::precisions with INT8 or FP8), TensorRT's
// rule: a convolution (not transposed) or matrix multiply with constant weights whose input carries a dynamic
// range; the first and the last of those layers stay in floating point unless BuilderConfig::int8_first_last.
// Everything else (softmax, norms, pointwise, pooling, layers without a range) keeps the floating precision.
// Among the layers allowed, tactic selection times the quantized tactics against the floating ones: a layer
// where they are not faster stays floating.

#include <vector>

#include "engine/core/plan_impl.h"
#include "kiln/engine/builder.h"

namespace kiln::engine {

/// Per plan layer: whether tactic selection may offer it quantized tactics (INT8 where the precisions have
/// INT8, FP8 where they have FP8).
std::vector<bool> int8_allowed_layers(const Plan::Impl& plan, const BuilderConfig& config);

/// The INT8 type a tensor with `range` is stored in: u8 for a never-negative range where the backend keeps
/// u8 tensors (Backend::int8_unsigned), else s8.
DType int8_storage(const Backend& backend, const DynamicRange& range);

/// During tactic selection (needs `g.consumers`), for the readers of tensor `id`: whether it will stay INT8
/// between layers (keep_int8_between_layers), its producer having taken an INT8 tactic, should its readers,
/// all convolutions that `allowed` lets quantize, take INT8 tactics too. An INT8 candidate is timed reading such an input in INT8 (tactics.cpp): its
/// producer will write it so, and timing the candidate's own quantization of a floating input would make
/// INT8 lose at every layer of a chain that runs INT8 end to end.
bool may_stay_int8(const Plan::Impl& g, const std::vector<bool>& allowed, int64_t id);

/// After tactic selection: stores in INT8 (int8_storage) every tensor with a dynamic range that an INT8
/// convolution writes (its activations all ReLU, which commute with the quantization) and only INT8
/// convolutions read, as their input or residual (a kernel converts a residual of the other kind into its
/// output's buffer). Bindings stay floating. With `explicit_quantization` (ranges from
/// the program's Q/DQ nodes, BuilderConfig::int8_explicit), residual additions keep the precision the program
/// gives them: a tensor read as a residual stays fp32, and so does the output of a convolution adding an fp32
/// residual (holding it in INT8 would round the residual, which the program adds unrounded). A tensor stays
/// floating where a layer writing or reading it would no longer apply with the new dtypes. Returns the number
/// of tensors changed; their layers' kernels must be re-created, and in a `timed` build they time themselves
/// again (PlanLayer::retime).
int keep_int8_between_layers(Plan::Impl& plan, bool explicit_quantization = false, bool timed = false);

/// Whether the tactic chosen for kernel layer `layer` computes in INT8 (the backend's Tactic::int8).
bool tactic_is_int8(const Plan::Impl& plan, int64_t layer);
/// Whether it computes in FP8 E4M3 (Tactic::fp8).
bool tactic_is_fp8(const Plan::Impl& plan, int64_t layer);

}  // namespace kiln::engine
