#pragma once
// Builtin operator implementations of the torch executor: Python operators on symbolic values, metadata
// queries and asserts (sym_size, _assert_scalar, ...), and implementations of torch 2.x ops that an older
// libtorch lacks. They are listed once, in the table of op_table.cpp. Internal to the runtime layer.

#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/core/Tensor.h>

#include "kiln/ir/graph.h"
#include "runtime/run_state.h"

namespace kiln::runtime {

/// A node's arguments as runtime values, by name (aten ops) or position (Python operators).
class NodeArgs {
 public:
  NodeArgs(const ir::Node& node, const RunState& state) : node_(node), state_(state) {}

  const ir::Node& node() const { return node_; }
  /// Number of arguments the node states.
  size_t size() const { return node_.args().size(); }
  /// True when the argument is present and not None.
  bool has(const std::string& name) const;
  /// The argument at a position / by name as its natural IValue (None when absent).
  c10::IValue value(size_t index) const;
  c10::IValue value(const std::string& name) const;

  // Typed readers: a missing required argument or a wrong kind throws kiln::Error(InvalidInput) naming it.
  at::Tensor tensor(const std::string& name) const;
  c10::optional<at::Tensor> optional_tensor(const std::string& name) const;
  int64_t int_(const std::string& name) const;
  int64_t int_or(const std::string& name, int64_t fallback) const;
  double float_or(const std::string& name, double fallback) const;
  c10::optional<double> optional_float(const std::string& name) const;
  bool bool_or(const std::string& name, bool fallback) const;
  std::vector<int64_t> ints(const std::string& name) const;
  c10::optional<std::vector<int64_t>> optional_ints(const std::string& name) const;
  std::string string_or(const std::string& name, const std::string& fallback) const;

 private:
  const ir::Argument& required(const std::string& name) const;
  const ir::Node& node_;
  const RunState& state_;
};

/// A builtin implementation: returns the node's results in output order (lists are flattened by the caller).
using BuiltinFn = std::vector<c10::IValue> (*)(const NodeArgs& args);

/// When the builtin is used: always, or only when libtorch's dispatcher does not know the op.
enum class BuiltinMode { Always, IfMissing };

struct BuiltinOp {
  const char* op;  // OpName::to_string() form: "aten.sym_size.int", "_operator.mul"
  BuiltinMode mode;
  BuiltinFn fn;
};

/// The one registration table of builtin ops (op_table.cpp).
const std::vector<BuiltinOp>& builtin_ops();
/// The table entry for an op name, or nullptr.
const BuiltinOp* find_builtin_op(const std::string& op_name);

// --- Symbolic and metadata ops (builtin_symbolic.cpp) ---------------------------------------------------
std::vector<c10::IValue> py_add(const NodeArgs& args);
std::vector<c10::IValue> py_sub(const NodeArgs& args);
std::vector<c10::IValue> py_mul(const NodeArgs& args);
std::vector<c10::IValue> py_truediv(const NodeArgs& args);
std::vector<c10::IValue> py_floordiv(const NodeArgs& args);
std::vector<c10::IValue> py_mod(const NodeArgs& args);
std::vector<c10::IValue> py_pow(const NodeArgs& args);
std::vector<c10::IValue> py_neg(const NodeArgs& args);
std::vector<c10::IValue> py_eq(const NodeArgs& args);
std::vector<c10::IValue> py_ne(const NodeArgs& args);
std::vector<c10::IValue> py_lt(const NodeArgs& args);
std::vector<c10::IValue> py_le(const NodeArgs& args);
std::vector<c10::IValue> py_gt(const NodeArgs& args);
std::vector<c10::IValue> py_ge(const NodeArgs& args);
std::vector<c10::IValue> py_and(const NodeArgs& args);
std::vector<c10::IValue> py_or(const NodeArgs& args);
std::vector<c10::IValue> py_not(const NodeArgs& args);
std::vector<c10::IValue> py_getitem(const NodeArgs& args);
std::vector<c10::IValue> py_ceil(const NodeArgs& args);
std::vector<c10::IValue> py_floor(const NodeArgs& args);
std::vector<c10::IValue> py_trunc(const NodeArgs& args);
std::vector<c10::IValue> py_sqrt(const NodeArgs& args);
std::vector<c10::IValue> sym_float(const NodeArgs& args);
std::vector<c10::IValue> sym_int(const NodeArgs& args);
std::vector<c10::IValue> sym_max(const NodeArgs& args);
std::vector<c10::IValue> sym_min(const NodeArgs& args);
std::vector<c10::IValue> sym_ite(const NodeArgs& args);
std::vector<c10::IValue> sym_size_int(const NodeArgs& args);
std::vector<c10::IValue> sym_size_default(const NodeArgs& args);
std::vector<c10::IValue> sym_stride_int(const NodeArgs& args);
std::vector<c10::IValue> sym_numel(const NodeArgs& args);
std::vector<c10::IValue> sym_storage_offset(const NodeArgs& args);
std::vector<c10::IValue> assert_scalar(const NodeArgs& args);
std::vector<c10::IValue> assert_async(const NodeArgs& args);
std::vector<c10::IValue> assert_tensor_metadata(const NodeArgs& args);
std::vector<c10::IValue> sym_constrain_range(const NodeArgs& args);
std::vector<c10::IValue> functional_sym_constrain_range(const NodeArgs& args);
std::vector<c10::IValue> functional_assert_async(const NodeArgs& args);

// --- torch 2.x ops an older libtorch lacks (builtin_compat.cpp) -----------------------------------------
std::vector<c10::IValue> native_batch_norm_legit_no_training(const NodeArgs& args);
std::vector<c10::IValue> native_batch_norm_legit(const NodeArgs& args);
std::vector<c10::IValue> native_batch_norm_legit_no_stats(const NodeArgs& args);
std::vector<c10::IValue> scaled_dot_product_attention(const NodeArgs& args);
std::vector<c10::IValue> sdpa_flash_attention_for_cpu(const NodeArgs& args);
std::vector<c10::IValue> squeeze_dims(const NodeArgs& args);
std::vector<c10::IValue> safe_softmax(const NodeArgs& args);
std::vector<c10::IValue> rms_norm(const NodeArgs& args);
std::vector<c10::IValue> unsafe_index(const NodeArgs& args);
std::vector<c10::IValue> any_dims(const NodeArgs& args);
std::vector<c10::IValue> all_dims(const NodeArgs& args);

/// The math of scaled_dot_product_attention (shared by both SDPA builtins and their tests): query [..., L, E],
/// key [..., S, E], value [..., S, Ev]; attn_mask bool (true = attend) or additive float; scale defaults to
/// 1/sqrt(E); enable_gqa repeats key/value heads (dim -3) to the query's head count. dropout_p must be 0.
at::Tensor sdpa_math(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                     const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                     c10::optional<double> scale, bool enable_gqa, at::Tensor* logsumexp = nullptr);

}  // namespace kiln::runtime
