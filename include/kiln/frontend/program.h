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
  /// How the program's caller passes inputs and gets outputs: torch.export's serialized pytree specs
  /// (torch.utils._pytree.treespec_dumps form) of the (args, kwargs) pair and of the result, from the root
  /// entry of the module call graph; empty when the archive has none. Kiln does not interpret them: the user
  /// inputs are the leaves of in_spec in order, the user outputs those of out_spec; the Python package
  /// flattens and rebuilds with them.
  std::string in_spec;
  std::string out_spec;
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
///
/// The graph it gives: user inputs as graph inputs (in signature order); parameters, buffers and tensor
/// constants as graph constants holding their data (contiguous HostTensors rebuilt from the archive's
/// storage, sizes, strides and storage offset); nodes in program order with their source metadata
/// (stack_trace, nn_module_stack, torch_fn, ...); for ops in Kiln's schema table (op_schema.h), all
/// arguments in schema order with omitted defaults filled. A node whose op returns a list of tensors has one
/// output Value per element; an "as_none" output slot is an unused Opaque Value. Range constraints become
/// graph->symbol_ranges() (a null or huge max is SymRange::kUnbounded, a null min 0) and the export hints
/// of lone-symbol sizes graph->symbol_hints().
Program load_program(const std::string& path);

/// The same from the archive's bytes; `label` names it in errors.
Program load_program_from_bytes(std::vector<uint8_t> bytes, const std::string& label = "<memory>");

}  // namespace kiln::frontend
