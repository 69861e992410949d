#pragma once
// Builds an ir::Graph from a deserialized ExportedProgram (models/<name>.json) and the archive's weights.

#include "frontend/json_reader.h"
#include "frontend/weights.h"
#include "kiln/frontend/program.h"

namespace kiln::frontend {

/// Fills `program` (graph, output kinds, versions) from the ExportedProgram JSON `root`. Throws
/// kiln::Error naming the entry, JSON path or node on anything malformed or unsupported.
void build_program(const JsonRef& root, WeightStore& weights, Program& program);

}  // namespace kiln::frontend
