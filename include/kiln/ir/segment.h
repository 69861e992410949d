#pragma once
// The engine segment node: the one spelling of what partitioning creates, conversion builds, the compiler
// refits and the runtime runs and saves.
//
// An engine segment is a node with target kiln.engine_segment.default whose subgraph() holds the segment's
// nodes. Its arguments "input_0", "input_1", ... are the segment's inputs in order and equal the subgraph's
// inputs (same value names); its outputs are the subgraph's outputs in order. Metadata kSegmentBackendKey
// names the backend it is built for. Nodes left to PyTorch carry metadata kSegmentRunKey naming the run of
// consecutive PyTorch nodes they belong to (partitioning/segments.h describes the whole partitioned graph).

#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

/// Metadata key on an engine segment node: the backend it is built for ("cpu", "cuda").
inline constexpr const char* kSegmentBackendKey = "kiln.backend";
/// Metadata key on a PyTorch node of a partitioned graph: the name of its run ("_run_on_gpu_<k>").
inline constexpr const char* kSegmentRunKey = "kiln.segment";

/// "kiln.engine_segment.default".
OpName engine_segment_op();

/// True for an engine segment node (target kiln.engine_segment.default), whether or not it holds its
/// subgraph.
bool is_engine_segment(const Node& node);

/// The backend recorded on an engine segment ("" when none).
std::string segment_backend(const Node& node);

/// The name of the segment node's argument that passes its subgraph's input `index`: "input_<index>".
std::string segment_input_name(size_t index);

/// The values an engine segment passes to its subgraph's inputs, in order. Throws kiln::Error(InvalidInput)
/// naming the segment when it has no subgraph, lacks an "input_<i>" argument or one names other than one
/// value.
std::vector<Value*> segment_inputs(const Node& segment);

}  // namespace kiln::ir
