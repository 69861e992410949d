#pragma once
// Random inputs for `kiln bench` without an .npz: one tensor per user input of a graph, its shape from the
// program's (symbolic) shape with every symbol bound by the user's --shape NAME=DIMS, else by the export's
// hint.

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "kiln/ir/graph.h"

namespace kiln::cli {

/// Random tensors for the user inputs of `graph`, in order. `shapes` holds "NAME=DIMS" texts (DIMS like
/// 2x10x64, see compiler::parse_input_spec); each names a tensor input and gives its whole shape, which must
/// agree with the program's static dims and symbol ranges. Symbols no --shape binds take the export's hint
/// (else the lower end of their range, at least 1). Floating inputs are uniform in [-1, 1), integer inputs 0
/// or 1 (valid token ids, masks and indices of any size), bools random. Throws kiln::Error naming the input
/// when a shape does not fit, an input is not a tensor, or a --shape names no input. `used` receives
/// "NAME=DIMS" of every input.
std::vector<at::Tensor> random_inputs(const ir::Graph& graph, const std::vector<std::string>& shapes,
                                      uint64_t seed, std::vector<std::string>* used = nullptr);

}  // namespace kiln::cli
