#pragma once
// A loaded torch.export program: the graph (with weights as constants) and what the archive said about it.

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::frontend {

/// What one entry of the exported signature's outputs is.
enum class OutputKind { UserOutput, BufferMutation, UserInputMutation, LossOutput, GradientToParameter,
                        GradientToUserInput, Token, ParameterMutation };

struct Program {
  std::unique_ptr<ir::Graph> graph;  // inputs() are the user inputs in order; weights are graph constants
  std::vector<OutputKind> output_kinds;  // one per graph output
  std::string source_path;
  std::string torch_version;
  int schema_major = 0;
  int schema_minor = 0;

  /// User inputs (the graph's inputs).
  const std::vector<ir::Value*>& user_inputs() const { return graph->inputs(); }
  /// Sum of numel over Parameter constants, and bytes over all constants.
  int64_t parameter_count() const;
  int64_t constant_bytes() const;
};

/// Loads a .pt2 archive (torch >= 2.9 layout). Throws kiln::Error naming the file and what is wrong.
Program load_program(const std::string& path);

}  // namespace kiln::frontend
