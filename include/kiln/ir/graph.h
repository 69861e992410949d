#pragma once
// The IR: Graph owns Values (graph inputs, constants, node outputs) and Nodes (in topological order).
// A Node is one operator call with named arguments, as torch.export serializes it.

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/op_name.h"
#include "kiln/ir/sym_expr.h"
#include "kiln/ir/tensor_meta.h"
#include "kiln/support/host_tensor.h"

namespace kiln::ir {

class Graph;
class Node;

/// What a Value carries at run time.
enum class ValueKind { Tensor, SymInt, SymFloat, SymBool, Opaque };
/// Where a Value comes from.
enum class ValueRole { Input, Constant, NodeOutput };
/// What a constant was in the exported program's signature.
enum class ConstantKind { Parameter, Buffer, Tensor };

const char* to_string(ValueKind kind);
const char* to_string(ConstantKind kind);

class Value {
 public:
  const std::string& name() const { return name_; }
  ValueKind kind() const { return kind_; }
  ValueRole role() const { return role_; }
  bool is_tensor() const { return kind_ == ValueKind::Tensor; }

  /// Tensor metadata (meaningful when is_tensor()).
  const TensorMeta& meta() const { return meta_; }
  void set_meta(TensorMeta meta) { meta_ = std::move(meta); }

  /// For SymInt values: the expression the value equals, when the program states it (else nullopt).
  const std::optional<SymExpr>& sym_value() const { return sym_value_; }
  void set_sym_value(std::optional<SymExpr> e) { sym_value_ = std::move(e); }

  /// The node producing this value (nullptr for inputs and constants) and which of its outputs it is.
  Node* producer() const { return producer_; }
  size_t output_index() const { return output_index_; }

  /// Constants only: state-dict name ("conv.weight", "_tensor_constant0"), kind and data. The data may be
  /// undefined for graphs parsed from IR text without values.
  const std::string& fqn() const { return fqn_; }
  ConstantKind constant_kind() const { return constant_kind_; }
  const HostTensor& data() const { return data_; }
  void set_data(HostTensor data) { data_ = std::move(data); }

 private:
  friend class Graph;
  std::string name_;
  ValueKind kind_ = ValueKind::Tensor;
  ValueRole role_ = ValueRole::NodeOutput;
  TensorMeta meta_;
  std::optional<SymExpr> sym_value_;
  Node* producer_ = nullptr;
  size_t output_index_ = 0;
  std::string fqn_;
  ConstantKind constant_kind_ = ConstantKind::Tensor;
  HostTensor data_;
};

/// A SymInt argument: a named SymInt value or a constant.
struct SymIntArg {
  Value* value = nullptr;  // non-null: a SymInt Value
  int64_t constant = 0;    // used when value is null
  bool is_value() const { return value != nullptr; }
  bool operator==(const SymIntArg&) const = default;
};

/// One argument of a node, tagged by kind, as torch.export serializes them (as_tensor, as_ints, ...).
class Argument {
 public:
  enum class Kind {
    None, Tensor, Tensors, OptionalTensors, Int, Ints, Float, Floats, Bool, Bools, String, Strings,
    SymInt, SymInts, SymFloat, SymBool, ScalarType, Layout, MemoryFormat, Device, Graph
  };

  Argument() = default;  // None
  static Argument none() { return Argument(); }
  static Argument tensor(Value* v);
  static Argument tensors(std::vector<Value*> vs);
  /// nullptr entries are None.
  static Argument optional_tensors(std::vector<Value*> vs);
  static Argument int_(int64_t v);
  static Argument ints(std::vector<int64_t> vs);
  static Argument float_(double v);
  static Argument floats(std::vector<double> vs);
  static Argument bool_(bool v);
  static Argument bools(std::vector<bool> vs);
  static Argument string(std::string v);
  static Argument strings(std::vector<std::string> vs);
  static Argument sym_int(SymIntArg v);
  static Argument sym_ints(std::vector<SymIntArg> vs);
  static Argument sym_float(Value* v);
  static Argument sym_bool(Value* v);
  static Argument scalar_type(DType d);
  static Argument layout(Layout l);
  static Argument memory_format(MemoryFormat m);
  static Argument device(Device d);
  /// A nested graph (the `as_graph` arguments of higher-order ops: cond's branches, a while loop's body, ...).
  /// Its inputs are the subgraph's parameters; it shares no values with the graph of the node holding it.
  static Argument graph(std::shared_ptr<const Graph> g);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }

  // Typed accessors: each throws kiln::Error(InvalidInput) naming the expected and actual kind on a
  // mismatch. Numeric accessors accept compatible kinds: as_int takes Int or a constant SymInt; as_float takes
  // Float or Int; as_ints takes Ints or SymInts whose entries are all constants.
  Value* as_tensor() const;
  const std::vector<Value*>& as_tensors() const;  // Tensors or OptionalTensors (nullptr for None)
  int64_t as_int() const;
  std::vector<int64_t> as_ints() const;
  double as_float() const;
  const std::vector<double>& as_floats() const;
  bool as_bool() const;
  const std::vector<bool>& as_bools() const;
  const std::string& as_string() const;
  const std::vector<std::string>& as_strings() const;
  SymIntArg as_sym_int() const;  // SymInt or Int
  std::vector<SymIntArg> as_sym_ints() const;  // SymInts or Ints
  Value* as_sym_value() const;  // SymFloat / SymBool value
  DType as_scalar_type() const;
  Layout as_layout() const;
  MemoryFormat as_memory_format() const;
  Device as_device() const;
  const std::shared_ptr<const Graph>& as_graph() const;

  /// Every Value this argument refers to (tensors, SymInt/SymFloat/SymBool values), in order, skipping None.
  std::vector<Value*> values() const;
  /// Replaces references to `from` by `to`; returns whether anything changed.
  bool replace_value(Value* from, Value* to);

  /// Text as the IR printer writes it ("%x", "[1, 2]", "1.5", "True", "\"tanh\"", "dtype.f32", ...); see text.h.
  std::string to_string() const;
  bool operator==(const Argument& other) const;

 private:
  Kind kind_ = Kind::None;
  std::vector<Value*> values_;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
  std::vector<bool> bools_;
  std::vector<std::string> strings_;
  std::vector<SymIntArg> sym_ints_;
  std::shared_ptr<const Graph> graph_;
};

const char* to_string(Argument::Kind kind);

struct NamedArgument {
  std::string name;
  Argument value;
  bool kwarg_only = false;
};

class Node {
 public:
  const std::string& name() const { return name_; }
  const OpName& target() const { return target_; }
  void set_target(OpName target) { target_ = std::move(target); }
  Graph* owner() const { return owner_; }

  const std::vector<NamedArgument>& args() const { return args_; }
  /// The argument named `name`, or nullptr when absent.
  const Argument* find_arg(const std::string& name) const;
  /// The argument named `name`; throws kiln::Error(InvalidInput) naming node and argument when absent.
  const Argument& arg(const std::string& name) const;
  /// The argument at a position (schema order); throws when out of range.
  const Argument& arg(size_t index) const;
  bool has_arg(const std::string& name) const { return find_arg(name) != nullptr; }
  /// Sets (or adds, at the end) the argument `name`.
  void set_arg(const std::string& name, Argument value, bool kwarg_only = false);
  void set_args(std::vector<NamedArgument> args) { args_ = std::move(args); }
  /// Removes the argument `name` if present.
  void remove_arg(const std::string& name);

  const std::vector<Value*>& outputs() const { return outputs_; }
  /// Output i; throws when out of range.
  Value* output(size_t i = 0) const;
  /// Every Value the node reads, in argument order, duplicates removed.
  std::vector<Value*> inputs() const;

  /// Source metadata (stack_trace, nn_module_stack, torch_fn, ...) as the program stated it.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::map<std::string, std::string>& mutable_metadata() { return metadata_; }

  /// A nested graph (engine segments made by partitioning hold their nodes here), or nullptr.
  const std::shared_ptr<Graph>& subgraph() const { return subgraph_; }
  void set_subgraph(std::shared_ptr<Graph> g) { subgraph_ = std::move(g); }

 private:
  friend class Graph;
  std::string name_;
  OpName target_;
  Graph* owner_ = nullptr;
  std::vector<NamedArgument> args_;
  std::vector<Value*> outputs_;
  std::map<std::string, std::string> metadata_;
  std::shared_ptr<Graph> subgraph_;
};

/// Description of a node output to create.
struct OutputSpec {
  std::string name;  // unique in the graph; empty: derived from the node name
  ValueKind kind = ValueKind::Tensor;
  TensorMeta meta;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  /// A deep copy (values, nodes, constants sharing their HostTensor storage).
  std::unique_ptr<Graph> clone() const;

  // --- Building -------------------------------------------------------------------------------
  /// Adds a graph (user) input at the end of inputs(). Throws on a duplicate name.
  Value* add_input(const std::string& name, ValueKind kind, TensorMeta meta = {});
  /// Adds a constant (weight / buffer / constant tensor). `meta` is taken from `data` when data is defined.
  Value* add_constant(const std::string& name, const std::string& fqn, ConstantKind kind, HostTensor data,
                      TensorMeta meta = {});
  /// Creates a node with outputs and inserts it before `before` (at the end when null).
  Node* create_node(OpName target, std::vector<NamedArgument> args, std::vector<OutputSpec> outputs,
                    Node* before = nullptr, const std::string& name = "");
  /// Sets the graph outputs.
  void set_outputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }
  /// Returns a name not used by any value or node, based on `base` ("relu", "relu_1", ...).
  std::string unique_name(const std::string& base) const;

  // --- Editing --------------------------------------------------------------------------------
  /// Removes a node. Throws kiln::Error(Internal) if any of its outputs still has users or is a graph output.
  void erase_node(Node* node);
  /// Removes a constant or input value that has no users.
  void erase_value(Value* value);
  /// Redirects every use of `from` (node arguments and graph outputs) to `to`; returns the number of uses.
  size_t replace_all_uses(Value* from, Value* to);
  /// Moves `node` to just before `before` (to the end when null).
  void move_before(Node* node, Node* before);
  /// Reorders nodes topologically (stable); throws kiln::Error(InvalidInput) on a cycle.
  void topological_sort();

  // --- Queries --------------------------------------------------------------------------------
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& constants() const { return constants_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  /// Nodes in program order.
  std::vector<Node*> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }
  Value* find_value(const std::string& name) const;
  Node* find_node(const std::string& name) const;
  /// Nodes that read `value`, in program order (computed by a scan: use a UseMap for many queries).
  std::vector<Node*> users(const Value* value) const;
  bool is_output(const Value* value) const;
  /// Position of a node in program order (computed by a scan).
  size_t index_of(const Node* node) const;

  /// Ranges of the shape symbols (from the program's range_constraints) and their export hints.
  SymRanges& symbol_ranges() { return symbol_ranges_; }
  const SymRanges& symbol_ranges() const { return symbol_ranges_; }
  std::map<std::string, int64_t>& symbol_hints() { return symbol_hints_; }
  const std::map<std::string, int64_t>& symbol_hints() const { return symbol_hints_; }

 private:
  Value* new_value(const std::string& name);
  std::list<std::unique_ptr<Node>>::iterator position(const Node* node) const;
  std::list<std::unique_ptr<Node>> nodes_;
  std::unordered_map<const Node*, std::list<std::unique_ptr<Node>>::iterator> node_positions_;
  std::unordered_map<std::string, Node*> node_names_;
  std::unordered_map<std::string, std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> constants_;
  std::vector<Value*> outputs_;
  SymRanges symbol_ranges_;
  std::map<std::string, int64_t> symbol_hints_;
};

/// Users of every value, computed once (invalidated by edits).
class UseMap {
 public:
  explicit UseMap(const Graph& graph);
  const std::vector<Node*>& users(const Value* value) const;

 private:
  std::unordered_map<const Value*, std::vector<Node*>> users_;
  std::vector<Node*> empty_;
};

}  // namespace kiln::ir
