#pragma once
// Arrays of an .npz picked for a program's values: `input_K` / `output_K`, else the value's own name (kiln
// run's --inputs and --compare, kiln compile's --sample-inputs, the int8 calibration data).

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/support/host_tensor.h"

namespace kiln::compiler {

/// Finds array `indexed` ("input_0"), else `name`, in an npz's arrays; kiln::Error naming `file` when
/// neither.
const HostTensor& pick(const std::map<std::string, HostTensor>& arrays, const std::string& indexed,
                       const std::string& name, const std::string& file);

/// The arrays of the .npz at `path` for `graph_inputs`, in order (input_K, else the input's name).
std::vector<HostTensor> pick_inputs(const std::vector<ir::Value*>& graph_inputs, const std::string& path);

/// Calibration batches from the .npz at `path` (docs/quantization.md): per input (input_K, else its name) an
/// array of the input's rank whose dim 0 stacks one or more batches of the input's static dim 0 (a dynamic
/// dim 0: batches of the max of its range under `ranges`, the last one the remaining rows, at least the
/// range's min); the other dims must be the input's static dims, and every input must give the same number of
/// batches. Floating inputs take floating arrays (as fp32), integer and Bool inputs integer or Bool arrays
/// (as the input's dtype). Returns per batch one value per input. kiln::Error(InvalidInput) naming the file
/// and the array.
std::vector<std::vector<HostTensor>> pick_calibration_batches(const std::vector<ir::Value*>& graph_inputs,
                                                              const std::string& path,
                                                              const ir::SymRanges& ranges = {});

}  // namespace kiln::compiler
