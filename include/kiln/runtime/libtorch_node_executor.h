#pragma once
// The libtorch node executor for host tensors: runs an ir::Graph node by node through libtorch
// (TorchExecutor), with host tensors in and out. The oracle that tests and `kiln run --reference` compare
// Kiln with (no ATen in this header, so tests and tools can call it without the ATen compile cost).

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/support/host_tensor.h"

namespace kiln::runtime {

/// Runs `graph` node by node through the libtorch dispatcher. `inputs` are the graph's inputs in order
/// (tensor inputs as HostTensors; SymInt inputs as 0-d int64 tensors). Returns the graph outputs (SymInt
/// outputs as 0-d int64). Throws kiln::Error naming the node on any failure.
std::vector<HostTensor> run_in_libtorch(const ir::Graph& graph, const std::vector<HostTensor>& inputs);

}  // namespace kiln::runtime
