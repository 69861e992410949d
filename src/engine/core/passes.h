#pragma once
// Builder passes over the plan being built (Plan::Impl before tactics and memory planning).

#include <map>
#include <string>

#include "engine/core/plan_impl.h"
#include "kiln/engine/builder.h"

namespace kiln::engine::passes {

/// Replaces layers whose inputs are all constants (and shapes of static tensors) by constants.
int fold_constants(Plan::Impl& g, bool refittable);
/// Removes layers that no output depends on, and tensors nothing uses; renumbers.
int remove_dead_layers(Plan::Impl& g);
/// Removes identity shuffles, turns transposes that move only dims of size 1 into reshapes (views), and merges
/// consecutive shuffles that cancel or compose.
int eliminate_shuffles(Plan::Impl& g);
/// Conv/matmul + constant operand + bias (+ bn scale) + activation + residual add.
int fuse_linear(Plan::Impl& g, bool refittable);
/// Chains of pointwise layers into one FusedPointwise layer.
int fuse_pointwise(Plan::Impl& g);
/// Static shapes: Attention layers read q/k/v through strided views of the tensors that chains of Shuffle /
/// select Gather layers copied them from, and write their output in the layout of a following permute
/// (attention_views.cpp). Returns the operands (q, k, v, output) so folded.
int fold_attention_views(Plan::Impl& g);
/// The layers that read tensor `id`, in plan order (each once).
std::vector<int64_t> consumers_of(const Plan::Impl& g, int64_t id);
/// The single consumer of `id` when it has exactly one, reading it once, and `id` is not a network output;
/// else -1.
int64_t sole_consumer(const Plan::Impl& g, int64_t id);
/// Attention layers that read q, k and v through views (fold_attention_views) of three matrix multiplies of
/// one input by constant weights: one matrix multiply by the weights concatenated, read at column offsets
/// (fuse_projections.cpp). Not in refittable or weight-stripped plans (their weights stay as named). Returns
/// the attention layers so fused.
int fuse_attention_projections(Plan::Impl& g);
/// Replaces every use of tensor `from` by `to` (layer inputs only).
void replace_uses(Plan::Impl& g, int64_t from, int64_t to);
/// Sets every tensor's producer from the layer list.
void reindex_producers(Plan::Impl& g);
/// Weakly typed reduced precision (`to` is fp16 or bf16): internal fp32 tensors become `to`, with casts at
/// the bindings, except where the precision policy (kiln/engine/precision_policy.h) keeps a layer in fp32 or
/// clamps a constant; g.precision_notes says where and why. `keep_fp32` (layer name -> reason) adds layers
/// the sample-input check found overflowing. Records the original dtype of each named weight it converts.
void lower_precision(Plan::Impl& g, DType to, std::map<std::string, DType>& original_dtypes,
                     const std::map<std::string, std::string>& keep_fp32 = {});

}  // namespace kiln::engine::passes
