#pragma once
// ConverterArgs: a node's arguments as the interpreter resolved them, one per schema argument, each in one of
// the three states the conversion page names:
//   - Tensor: an engine::Tensor* produced by an earlier node (or a network input);
//   - Weight: a frozen weight (an ir constant), as a HostTensor with its state-dict name;
//   - Scalar: a compile-time constant (ints, floats, bools, strings, dtypes, lists of those), the IR argument as
//     is; SymInt arguments are resolved to SymIntValue (a static integer or a 1-element Int64 shape tensor).

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/engine/network.h"
#include "kiln/ir/graph.h"
#include "kiln/support/host_tensor.h"

namespace kiln::conversion {

class ConversionContext;

/// A symbolic integer: known at build time (`value`) or computed at run time (`tensor`, Int64 of shape [1]).
struct SymIntValue {
  std::optional<int64_t> value;
  engine::Tensor* tensor = nullptr;
  bool is_static() const { return value.has_value(); }
};

/// One resolved argument (or one element of a tensor list).
struct ArgValue {
  enum class State { None, Tensor, Weight, Scalar };
  State state = State::None;
  engine::Tensor* tensor = nullptr;  // Tensor
  HostTensor weight;                 // Weight
  std::string weight_name;           // Weight: the constant's state-dict name (its refit key)
  const ir::Argument* scalar = nullptr;  // Scalar: the IR argument
  const ir::Value* value = nullptr;  // the IR value for Tensor / Weight states

  bool is_none() const { return state == State::None; }
  bool is_tensor() const { return state == State::Tensor; }
  bool is_weight() const { return state == State::Weight; }
  bool is_scalar() const { return state == State::Scalar; }
};

/// Maps IR values (segment inputs, earlier node outputs, SymInt values) to the engine tensors they became.
using TensorMap = std::unordered_map<const ir::Value*, engine::Tensor*>;

class ConverterArgs {
 public:
  /// The arguments of `node`, resolved against `tensors` (which must outlive this object).
  ConverterArgs(const ir::Node& node, const TensorMap& tensors) : node_(&node), tensors_(&tensors) {}

  const ir::Node& node() const { return *node_; }
  /// The argument named `name` in its state (State::None when absent or None).
  ArgValue get(const std::string& name) const;
  /// True when the argument exists and is not None.
  bool has(const std::string& name) const { return !get(name).is_none(); }
  /// The elements of a tensor-list argument (Tensors / OptionalTensors), each resolved (None elements too).
  std::vector<ArgValue> list(const std::string& name) const;

  /// The argument as a network tensor: Tensor as is; a Weight or numeric Scalar becomes a constant layer (a
  /// weight is recorded for refit). Throws kiln::Error naming the node and argument when None.
  engine::Tensor* tensor(ConversionContext& ctx, const std::string& name) const;
  /// An ArgValue as a network tensor (as tensor() does for a named argument).
  static engine::Tensor* materialize(ConversionContext& ctx, const ArgValue& arg, const std::string& what);

  // Compile-time scalars; `fallback` is returned when the argument is absent or None. Throw kiln::Error naming
  // the node when the argument has another kind or is only known at run time.
  int64_t int_(const std::string& name, std::optional<int64_t> fallback = std::nullopt) const;
  double float_(const std::string& name, std::optional<double> fallback = std::nullopt) const;
  bool bool_(const std::string& name, std::optional<bool> fallback = std::nullopt) const;
  std::vector<int64_t> ints(const std::string& name,
                            std::optional<std::vector<int64_t>> fallback = std::nullopt) const;
  std::string string(const std::string& name, std::optional<std::string> fallback = std::nullopt) const;
  /// A ScalarType argument (nullopt when absent or None).
  std::optional<DType> dtype(const std::string& name) const;
  /// A SymInt (or Int) argument.
  SymIntValue sym_int(ConversionContext& ctx, const std::string& name) const;
  /// A SymInt list (or Ints) argument.
  std::vector<SymIntValue> sym_ints(ConversionContext& ctx, const std::string& name) const;
  /// The raw IR argument (nullptr when absent).
  const ir::Argument* raw(const std::string& name) const { return node_->find_arg(name); }
  /// The engine tensor a value became (nullptr when none).
  engine::Tensor* lookup(const ir::Value* value) const;

 private:
  ArgValue resolve(const ir::Value* value) const;
  SymIntValue resolve_sym(ConversionContext& ctx, const ir::SymIntArg& arg) const;
  const ir::Node* node_;
  const TensorMap* tensors_;
};

}  // namespace kiln::conversion
