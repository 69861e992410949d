#pragma once
// Formats written by producers: where a consumer's tactic reads a tensor in another format than its producer
// writes, the builder inserts a Reformat layer (builder.cpp, assign_formats) -- unless the producer can write
// that format itself (Backend::writes_format), which saves the Reformat's pass over the tensor (a matmul that
// stores its fp16 result as E4M3 for the FP8 layer after it). Tactic selection counts no Reformat for such a
// tensor (tactics.cpp), so the consumer's contest is decided by what the engine will run. A producer whose
// output other layers read as it is may instead write a copy in the format (producer_copies).

#include "engine/core/plan_impl.h"

namespace kiln::engine {

/// Whether the layer that writes tensor `id` (or the first tensor of the reshape views it comes through,
/// view_source) can write it in `format` in place of a Reformat after it: the tensor is output 0 of a kernel
/// layer whose tactic is chosen, it is no binding, exactly one layer reads it (once: a kernel layer), no
/// profile holds it larger than profile 0 (the shapes kernels are made for) and no input of the producer may
/// be empty (empty inputs run the reference, which writes Plain only), and that tactic writes `format`
/// (Backend::writes_format) within `workspace_limit` bytes of workspace. Needs `g.consumers` and
/// `g.profiles`.
bool producer_writes(const Plan::Impl& g, int64_t id, TensorFormat format, size_t workspace_limit);

/// Where tensor `id` comes through reshape views in `format`: following back a chain of kernel Shuffles that
/// only reshape (is_reshape_view) and whose tactic passes `format` on from input to output, each reading a
/// tensor that is no binding and that only it reads, the chain's first tensor; `id` when it is no such view's
/// output. Its producer writing `format` makes every tensor of the chain `format` (the attention's output,
/// reshaped for the FP8 attention-out projection): producer_writes follows the chain, with `id` read once and
/// no binding. Needs `g.consumers`.
int64_t view_source(const Plan::Impl& g, int64_t id, TensorFormat format);

/// Whether the layer that writes tensor `id` can also write a copy of it in `format` (Backend::writes_copy),
/// which its readers in that format take in place of a Reformat's copy while the others read `id` (a layer
/// norm's output, the residual stream and the FP8 matmul's input): the tensor is output 0 of a kernel layer
/// whose tactic is chosen and writes it Plain, it is no plan output, kernel layers only read it, and no input
/// of the producer may be empty at any profile (empty inputs run the reference, which writes no copies).
/// Needs `g.consumers` and `g.profiles`.
bool producer_copies(const Plan::Impl& g, int64_t id, TensorFormat format);

/// producer_writes or producer_copies: whether tensor `id` reaches a reader in `format` without a Reformat.
bool producer_provides(const Plan::Impl& g, int64_t id, TensorFormat format, size_t workspace_limit);

}  // namespace kiln::engine
