#pragma once
// Internal to the runtime: the check of a module's inputs against its program (count, dtype, device, rank and
// every dim against the shapes and symbol ranges), shared by HostModule (host tensors) and CompiledModule
// (libtorch tensors): each describes its tensors as InputFacts. No ATen here.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/support/dtype.h"

namespace kiln::runtime {

/// What the check needs to know of one input tensor.
struct InputFacts {
  bool defined = true;
  /// The input's device as the caller names it; not checked when empty.
  std::string device;
  /// Kiln's dtype of the tensor (nullopt when Kiln has no such dtype) and its name for messages.
  std::optional<DType> dtype;
  std::string dtype_text;
  std::vector<int64_t> sizes;
  /// For SymInt inputs: whether the tensor holds one integer (one element, not floating point).
  bool one_integer = false;
};

/// Throws kiln::Error(InvalidInput) naming the input and dim on the first mismatch of `inputs` against `graph`'s
/// inputs; tensors must be on `device` (where InputFacts::device is given).
void check_module_inputs(const ir::Graph& graph, const std::vector<InputFacts>& inputs, const std::string& device);

}  // namespace kiln::runtime
