#pragma once
// What `kiln inspect` reports about a loaded program, as plain data (shared by the text and JSON forms).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/frontend/program.h"

namespace kiln::cli {

struct TensorInfo {
  std::string name;
  std::string kind;  // "tensor", "sym_int", ...
  std::string dtype;  // "f32"
  std::vector<std::string> shape;  // each dim: an integer or a symbolic expression ("s77", "2*s77")
  std::vector<std::optional<int64_t>> static_shape;  // the integer dims (nullopt where symbolic)
};

struct ProgramInfo {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;  // user outputs only
  int64_t parameters = 0;           // elements over Parameter constants
  int64_t parameter_bytes = 0;      // bytes over Parameter constants
  int64_t constant_bytes = 0;       // bytes over all constants (parameters, buffers, constant tensors)
  std::map<std::string, ir::SymRange> symbols;  // the symbols the user inputs' shapes use
  std::map<std::string, int64_t> ops;           // node count per op
  size_t num_nodes = 0;
};

/// A graph value's name, kind, dtype and shape.
TensorInfo tensor_info(const ir::Value& v);
/// "f32[s77, 3]" (the kind for a non-tensor).
std::string shape_text(const TensorInfo& t);
/// {"name", "dtype", "shape"}: static dims as integers, symbolic ones as their expression text.
nlohmann::json tensor_json(const TensorInfo& t);

/// Summarizes a program.
ProgramInfo describe_program(const frontend::Program& program);

/// The summary as `kiln inspect --json` prints it (and kiln.inspect returns it in Python): {"inputs",
/// "outputs" (each {"name", "dtype", "shape"}, a dim an integer or a symbolic expression), "parameters",
/// "parameter_bytes", "symbols": {name: {"min", "max" (null: unbounded)}}, "ops": {op: count}}.
nlohmann::json program_info_json(const ProgramInfo& info);

/// The graph outputs that are user outputs (what io_N.npz's output_K refer to).
std::vector<size_t> user_output_indices(const frontend::Program& program);

}  // namespace kiln::cli
