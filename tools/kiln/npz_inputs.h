#pragma once
// Arrays of an .npz picked for a program's values: `input_K` / `output_K`, else the value's own name (kiln
// run's
// --inputs and --compare, kiln compile's --sample-inputs).

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/support/host_tensor.h"

namespace kiln::cli {

/// Finds array `indexed` ("input_0"), else `name`, in an npz's arrays; kiln::Error naming `file` when
/// neither.
const HostTensor& pick(const std::map<std::string, HostTensor>& arrays, const std::string& indexed,
                       const std::string& name, const std::string& file);

/// The arrays of the .npz at `path` for `graph_inputs`, in order (input_K, else the input's name).
std::vector<HostTensor> pick_inputs(const std::vector<ir::Value*>& graph_inputs, const std::string& path);

}  // namespace kiln::cli
