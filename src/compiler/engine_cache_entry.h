#pragma once
// What the compiler stores in the engine cache for one engine segment, and how a hit becomes a runnable engine.
//
// Blob: u64 header size | header JSON | weightless plan (engine::Plan::serialize(true)). The header holds the
// plan's binding per segment input/output (the plan names them after the first compile's values, which the hash
// leaves out) and the digests of the constants the plan holds baked in (not refittable: detail::
// baked_constant_digests). A hit is used only when those constants are unchanged; the plan is then refitted
// from the segment's constants. The header also keeps what the compile report says of the build that the plan
// does not: of its INT8 ranges (whether they came from the program's Q/DQ nodes, and what each Q/DQ node
// became) and its reduced-precision notes (the layers an fp16/bf16 build kept in fp32 and the constants it
// clamped, with the rule), so that a hit reports what the build reported; entries written before these keys
// read as none.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/plan.h"
#include "kiln/engine/precision_policy.h"
#include "kiln/ir/graph.h"

namespace kiln::compiler::detail {

struct CachedEngine {
  std::shared_ptr<engine::Plan> plan;
  std::vector<std::string> input_bindings;
  std::vector<std::string> output_bindings;
  /// The INT8 ranges came from the program's quantize/dequantize nodes (conversion::BuiltSegment::program_ranges).
  bool program_ranges = false;
  /// What each quantize/dequantize node became (conversion::BuiltSegment::quantization_notes).
  std::vector<std::string> quantization_notes;
  /// The reduced-precision build's departures (engine::precision_notes of the built plan, which a deserialized
  /// plan does not carry).
  std::vector<engine::PrecisionNote> precision_notes;
};

/// The cache blob of a freshly built (refittable) plan for `segment`.
std::vector<uint8_t> make_cache_entry(const CachedEngine& engine, const ir::Graph& segment);

/// The engine a cache blob holds, refitted with `segment`'s weights; it serializes with or without its weights as
/// `strip_weights` (the settings' strip_engine_weights) says, its kernels made on a backend with `options` (the
/// settings' threads). Throws kiln::Error when the blob is malformed, its bindings do not fit the segment, a
/// baked-in constant differs, or the refit fails (the caller rebuilds).
CachedEngine load_cache_entry(const std::vector<uint8_t>& blob, const ir::Graph& segment, bool strip_weights,
                              const engine::BackendOptions& options);

}  // namespace kiln::compiler::detail
