#pragma once
// RunState: the runtime values of one execution of a graph (one slot per ir::Value), and the conversion of
// node arguments into libtorch IValues. Internal to the runtime layer.

#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/ivalue.h>

#include "kiln/ir/graph.h"

namespace kiln::runtime {

/// Slot index of every value a graph execution stores.
using SlotMap = std::unordered_map<const ir::Value*, size_t>;

/// The values of one execution. SymInt values are Int IValues, SymFloat Double, SymBool Bool.
class RunState {
 public:
  RunState(const SlotMap& slots, size_t count) : slot_of_(&slots), values_(count) {}

  /// The runtime value of `value`. A SymInt without a stored value is evaluated from its expression under the
  /// bound shape symbols. Throws kiln::Error(Internal) naming the value when it has not been computed.
  c10::IValue get(const ir::Value* value) const;
  /// Stores the runtime value of `value`.
  void set(const ir::Value* value, c10::IValue v);

  /// When set, every device argument converts to this device (TorchExecutor's device override).
  void set_device_override(c10::optional<c10::Device> device) { device_override_ = device; }
  const c10::optional<c10::Device>& device_override() const { return device_override_; }

  /// Shape symbols bound from the inputs' sizes ("s77" -> 2).
  ir::SymBindings& bindings() { return bindings_; }
  const ir::SymBindings& bindings() const { return bindings_; }

 private:
  size_t slot(const ir::Value* value) const;
  const SlotMap* slot_of_;
  std::vector<c10::IValue> values_;
  ir::SymBindings bindings_;
  c10::optional<c10::Device> device_override_;
};

/// Converts an argument into the IValue it naturally stands for (tensors, int lists, optional tensor lists,
/// dtype codes, ...), reading referenced values from `state`.
c10::IValue argument_to_ivalue(const ir::Argument& arg, const RunState& state);

/// Adapts a natural IValue to the type libtorch's schema declares for an argument (int -> float where a float
/// is expected, a single int -> int[N], Tensor[] <-> Tensor?[]). Throws kiln::Error(InvalidInput) on a mismatch
/// that cannot be adapted, naming the argument.
c10::IValue coerce_to_schema_type(c10::IValue value, const c10::TypePtr& type, const std::string& arg_name,
                                  c10::optional<int32_t> list_size);

/// Python number helpers shared by the symbolic builtins: true for Int/Double/Bool IValues.
bool is_number(const c10::IValue& v);

}  // namespace kiln::runtime
