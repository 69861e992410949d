#pragma once
// Internal helpers for lowering passes and decompositions: op matching, emitting nodes with metadata,
// replacing nodes, and symbolic shape arithmetic.

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::lowering::detail {

/// True when the node's target prints as `target` ("aten.add.Tensor").
bool is_op(const ir::Node& node, std::string_view target);
bool is_op_any(const ir::Node& node, std::initializer_list<std::string_view> targets);

/// The node producing `v` when it is `target`; nullptr otherwise (also for a null `v`, a graph input or a
/// constant).
ir::Node* producer_of(ir::Value* v, std::string_view target);

/// Shorthand for a named argument.
ir::NamedArgument named(std::string name, ir::Argument value, bool kwarg_only = false);

/// Creates `target(args)` before `before` with one output of `meta`, named after `base` (made unique).
ir::Value* emit(ir::Graph& graph, ir::Node* before, std::string_view target, std::vector<ir::NamedArgument> args,
                ir::TensorMeta meta, const std::string& base);
/// Creates a node with several outputs (one per meta).
ir::Node* emit_multi(ir::Graph& graph, ir::Node* before, std::string_view target,
                     std::vector<ir::NamedArgument> args, const std::vector<ir::TensorMeta>& metas,
                     const std::string& base);
/// Creates a SymInt-valued node (sym_size.int, ...) whose value equals `value`.
ir::Value* emit_sym(ir::Graph& graph, ir::Node* before, std::string_view target,
                    std::vector<ir::NamedArgument> args, std::optional<ir::SymExpr> value, const std::string& base);

/// Redirects output i of `node` to replacements[i] (null entries must be unused) and erases the node.
void replace_node(ir::Graph& graph, ir::Node* node, const std::vector<ir::Value*>& replacements);
/// Redirects uses of `from` in nodes after `after` (in program order) and in the graph outputs to `to`.
size_t replace_uses_after(ir::Graph& graph, ir::Node* after, ir::Value* from, ir::Value* to);

/// The tensor argument `name`, or nullptr when absent or None.
ir::Value* tensor_arg(const ir::Node& node, const std::string& name);
/// The argument `name` when it is a tensor; nullptr when absent, None or of another kind (a number): for
/// pattern matching over ops whose operand may be either (aten.mul.Tensor's `other`).
ir::Value* tensor_arg_if_tensor(const ir::Node& node, const std::string& name);
/// The argument `name` as int/float/bool, or `fallback` when absent or None.
int64_t int_arg(const ir::Node& node, const std::string& name, int64_t fallback);
double float_arg(const ir::Node& node, const std::string& name, double fallback);
bool bool_arg(const ir::Node& node, const std::string& name, bool fallback);
/// True when the argument is absent or None.
bool arg_is_none(const ir::Node& node, const std::string& name);

/// A meta with `meta`'s dtype and device and other sizes (contiguous).
ir::TensorMeta with_sizes(const ir::TensorMeta& meta, std::vector<ir::SymExpr> sizes);
/// A meta with another dtype.
ir::TensorMeta with_dtype(const ir::TensorMeta& meta, DType dtype);

/// `dim` made non-negative for a tensor of `rank`; throws kiln::Error(InvalidInput) naming the node.
int64_t normalize_dim(int64_t dim, int64_t rank, const ir::Node& node);
/// Numpy-style broadcast of two shapes (a size-1 dim takes the other; equal symbolic sizes agree).
std::vector<ir::SymExpr> broadcast_sizes(const std::vector<ir::SymExpr>& a, const std::vector<ir::SymExpr>& b);
/// Shape after reducing `dims` (already normalized).
std::vector<ir::SymExpr> reduced_sizes(const std::vector<ir::SymExpr>& sizes, const std::vector<int64_t>& dims,
                                       bool keepdim);

/// SymInt arguments for `sizes`: constants stay constants; a symbolic size equal to a dim of `source`
/// becomes a sym_size.int node on `source` (inserted before `before`), or an existing SymInt value stating
/// that expression. nullopt when some size cannot be expressed.
std::optional<std::vector<ir::SymIntArg>> size_args(ir::Graph& graph, ir::Node* before, ir::Value* source,
                                                    const std::vector<ir::SymExpr>& sizes);
/// An Argument holding `args` (Ints when all constant, SymInts otherwise).
ir::Argument sym_ints_argument(const std::vector<ir::SymIntArg>& args);

/// The arguments of aten._to_copy.default(self, *, dtype, layout, device, pin_memory, non_blocking,
/// memory_format) with only dtype set (None when nullopt).
std::vector<ir::NamedArgument> to_copy_args(ir::Value* self, std::optional<DType> dtype);

/// A new 0-d constant holding `value` in `dtype` (kind Tensor).
ir::Value* scalar_constant(ir::Graph& graph, DType dtype, double value, const std::string& base);
/// A new constant holding `data` (kind Tensor), named after `base`.
ir::Value* tensor_constant(ir::Graph& graph, HostTensor data, const std::string& base);
/// Erases the producers of `worklist`'s values that nothing reads any more (not graph outputs, one output, op
/// one of `targets`), then theirs, and so on: what a rewrite left of the formula it replaced.
void erase_dead_producers(ir::Graph& graph, std::vector<ir::Value*> worklist,
                          std::initializer_list<std::string_view> targets);
/// Erases `value` when it is an unused constant that is not a graph output.
void erase_if_dead_constant(ir::Graph& graph, ir::Value* value);

/// True for in-place ops (name ends in '_' or is copy_/set_/...), random ops and effectful ops (asserts,
/// prints): nodes that must not be merged or dropped.
bool has_side_effects(const ir::Node& node);
bool is_random(const ir::Node& node);

}  // namespace kiln::lowering::detail
