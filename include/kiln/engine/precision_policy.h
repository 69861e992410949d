#pragma once
// The reduced-precision policy of a weakly typed build (BuilderConfig::precisions with fp16 or bf16): every
// floating layer runs in the reduced type except where a rule says that would overflow or lose what eager
// PyTorch in that type keeps. The rules (engine/core/precision.cpp applies them, after fusion):
//
// - Kernels accumulate in fp32 whatever their tensors' type: reductions, softmax, layer/group/instance norm
//   statistics, matrix multiplies and convolutions (fp32 compute), fused pointwise programs (evaluated in
//   float). No layer is kept in fp32 for its accumulation alone.
// - fp16: a Reduce Sum or Prod keeps its result in fp32 (a sum of fp16 values passes 65504 long before its
//   terms do); a Reduce of any kind whose input is a square, power or exponential (a pointwise layer or fused
//   program containing x*x, pow or exp: sums of squares of variance and RMS norms, decomposed softmaxes)
//   keeps both that producer and itself in fp32, so the terms cannot overflow before they are reduced. The
//   pointwise layers reading such a reduction (the eps-add and rsqrt of a variance, a division of a sum) stay
//   in fp32 too, so the reduced value reaches them unrounded and unclipped.
// - fp16: a constant (weights, fill values, a fused program's constants) whose finite values lie outside
// fp16's
//   range clamps them to +-65504 instead of becoming +-inf: masks filled with torch.finfo(float32).min
//   (-3.4e38) stay finite, so a fully masked softmax row is uniform as in eager fp16 (which fills with
//   finfo(float16).min), not NaN.
// - With sample inputs (BuilderConfig::sample_inputs), the data: the first layer along each path whose output
//   is non-finite in the reduced type on a sample, where the fp32 build's is finite, stays in fp32 (found by
//   probe builds at build time: engine/core/precision_probe.h).
// Layers kept in fp32 read their reduced-type inputs through casts up, and their consumers read them through
// casts down; network inputs feed fp32 layers directly.

#include <string>
#include <vector>

namespace kiln::engine {

class Plan;

/// One departure from the reduced precision: the layer (or constant) and the rule that applied.
struct PrecisionNote {
  std::string layer;
  std::string reason;
};

/// The departures the build of `plan` made (empty for an fp32 build and for a deserialized plan).
const std::vector<PrecisionNote>& precision_notes(const Plan& plan);

}  // namespace kiln::engine
