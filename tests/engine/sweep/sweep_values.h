#pragma once
// Host values of the conformance sweep: generated inputs, memory-format conversion, and comparison with a
// tolerance stated per dtype.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {

/// Allowed |got - want| <= atol + rtol * |want| for outputs of a layer whose lowest-precision floating tensor
/// has `dtype`. Cases draw values in [-1, 1) (or a small range), so an indexing or semantic bug shows as an
/// error of order 0.1..1, far above every tolerance here.
struct Tolerance {
  double atol = 0, rtol = 0;
};

/// The tolerance for a layer whose lowest-precision floating tensor has `dtype` (the reasons are in the
/// .cpp).
Tolerance tolerance_for(DType dtype);
/// The tolerance of a layer: that of its lowest-precision floating tensor, looser for tactics that promise
/// less.
Tolerance layer_tolerance(const LayerInfo& info, const Tactic& tactic);

/// "[2,3,4]".
std::string dims_text(const Dims& d);
/// The bytes of a dense tensor laid out in `format` (blocked channel tails zero).
std::vector<uint8_t> to_format(const HostTensor& t, TensorFormat format);
/// The dense tensor of `dims` read from `bytes` laid out in `format`.
HostTensor from_format(const std::vector<uint8_t>& bytes, DType dtype, const Dims& dims, TensorFormat format);
/// The values of input `s`, deterministic for `seed`.
HostTensor generate(const InputSpec& s, uint32_t seed);
/// A seed from a case name (FNV-1a), so each case draws its own values whatever the list order.
uint32_t seed_of(const std::string& name);
/// Compares got with want; returns "" when they agree, else what differs (the first mismatch and the count).
std::string compare(const HostTensor& got, const HostTensor& want, Tolerance tol);

}  // namespace kiln::engine::sweep
