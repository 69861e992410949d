#pragma once
// The engine cache key of an engine segment (Torch-TensorRT hashes the GraphModule without its weights, the input
// specs and the engine-invariant settings). Two segments get the same hash exactly when a plan built for one
// computes the other after a refit with its weights:
//   - the canonical segment graph: op targets, arguments, structure, input and constant dtypes and shapes; value
//     names normalized (v0, v1, ... in order), constants named by their state-dict name (the refit key), weight
//     *values* left out;
//   - the shape ranges the engine is built for (the symbol ranges and export hints the segment sees);
//   - the engine-invariant settings (scope Engine in kiln/settings/settings_table.h: backend, precisions, typing,
//     workspace, optimization level, timing iterations, TF32) and the backend's device string (cpu features and
//     threads);
//   - Kiln's plan format version and the key's own format version.
// Constants whose values a converter or the builder compiles into the plan (not refittable) are checked separately
// on a cache hit (compiler/engine_cache_entry.h).

#include <string>

#include "kiln/compiler/compilation_settings.h"
#include "kiln/ir/graph.h"

namespace kiln::compiler {

/// The canonical text of `segment` that the hash is taken over (no weight values), for tests and --verbose.
std::string canonical_segment_text(const ir::Graph& segment);

/// SHA-256 (64 hex digits) of everything above. `symbol_ranges`/`symbol_hints` are those the segment is converted
/// with; `device` is the backend's device string.
std::string engine_segment_hash(const ir::Graph& segment, const ir::SymRanges& symbol_ranges,
                                const std::map<std::string, int64_t>& symbol_hints,
                                const CompilationSettings& settings, const std::string& device);

}  // namespace kiln::compiler
