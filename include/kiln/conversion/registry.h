#pragma once
// The converter registry (Torch-TensorRT's DYNAMO_CONVERTERS): for every operator overload, an ordered list of
// candidate converters, and the lookup that picks one for a node.
//
// Lookup (registry page): a node whose target is in settings.torch_executed_ops misses; otherwise the
// candidates for its target are tried in order (High-priority registrations first) and the first whose
// capability validator passes and whose dynamic-shape rule holds (the node is static, or the converter
// supports dynamic shapes, or settings.assume_dynamic_shape_support) wins; else the lookup misses.
//
// The registry knows nothing of the engine: converter implementations are opaque std::functions.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/conversion/conversion_context_fwd.h"
#include "kiln/conversion/validators.h"
#include "kiln/ir/graph.h"

namespace kiln::conversion {

/// One registered converter (Torch-TensorRT's ConverterSupport).
struct ConverterSupport {
  ConverterImpl converter_implementation;
  /// Empty: always true.
  CapabilityValidator capability_validator;
  bool supports_dynamic_shapes = false;
  bool requires_output_allocator = false;
};

/// Where a registration goes in the candidate list of its target: High to the front, Standard to the back.
enum class Priority { Standard, High };

/// The flags a lookup returns with the chosen converter.
struct ConverterFlags {
  bool supports_dynamic_shapes = false;
  bool requires_output_allocator = false;
};

/// Options of one registration (the decorator's keyword arguments).
struct RegistrationOptions {
  /// false: the registration is a no-op.
  bool enabled = true;
  CapabilityValidator capability_validator;
  Priority priority = Priority::Standard;
  bool supports_dynamic_shapes = false;
  bool requires_output_allocator = false;
  /// Which converter table the registration belongs to ("registry info"); users' converters may name theirs.
  std::string registry_name = "kiln_aten_converters";
};

/// A candidate converter with where it came from.
struct ConverterEntry {
  ConverterSupport support;
  std::string registry_name;
  Priority priority = Priority::Standard;
};

/// The result of a successful lookup.
struct ConverterMatch {
  ConverterImpl converter_implementation;
  ConverterFlags flags;
  std::string registry_name;
  /// Position of the chosen converter in its target's candidate list.
  size_t candidate_index = 0;
};

/// Why a lookup missed, for capability reports.
enum class LookupMiss { None, Disallowed, NoConverter, ValidatorRejected, DynamicShapes };

/// A lookup result with the reason for a miss.
struct LookupResult {
  std::optional<ConverterMatch> match;
  LookupMiss miss = LookupMiss::None;
  /// For misses: a sentence saying why ("no converter registered for aten.lgamma.default", ...).
  std::string reason;
};

class ConverterRegistry {
 public:
  /// Lists the overloads of a packet ("aten.relu" -> {"default", "out"}), or nullopt when unknown.
  using OverloadResolver = std::function<std::optional<std::vector<std::string>>(const std::string& packet)>;

  /// Registers `impl` for `key`, an overload such as "aten.relu.default" (or "torch.ops.aten.relu.default",
  /// "aten::relu.default", a Python operator "_operator.getitem"). A bare packet ("aten.relu") is accepted only
  /// when the overload resolver says it has no overloads other than "default" and "out" (it then registers
  /// "default"); otherwise kiln::Error(InvalidInput) names the key. A disabled registration is a no-op.
  void register_converter(std::string_view key, ConverterImpl impl, RegistrationOptions options = {});
  /// Installs the packet overload resolver (the op schema table); none is installed by default.
  void set_overload_resolver(OverloadResolver resolver) { resolver_ = std::move(resolver); }

  /// Validated lookup with the reason on a miss.
  LookupResult lookup(const ir::Node& node, const settings::CompilationSettings& settings) const;
  /// Validated lookup; nullopt on a miss (Torch-TensorRT's get(node)).
  std::optional<ConverterMatch> get(const ir::Node& node, const settings::CompilationSettings& settings) const;
  /// Validated lookup; throws kiln::Error(Unsupported) naming the node and the reason on a miss.
  ConverterMatch at(const ir::Node& node, const settings::CompilationSettings& settings) const;
  /// Validated check (node in DYNAMO_CONVERTERS).
  bool contains(const ir::Node& node, const settings::CompilationSettings& settings) const;
  /// Unvalidated check: is any converter registered for this target.
  bool contains(const ir::OpName& target) const;

  /// Every registered target, sorted by name.
  std::vector<ir::OpName> unique_targets() const;
  /// Every candidate for a target in lookup order (empty when none).
  std::vector<ConverterEntry> get_all_converters_with_target(const ir::OpName& target) const;
  /// {target: {registry name: number of converters}}.
  std::map<std::string, std::map<std::string, int>> get_converter_support_info() const;
  /// A text table: one row per target with its converters' registries, priorities and flags.
  std::string display_all_available_converters() const;
  /// Number of registered converters over all targets.
  size_t size() const;
  /// Removes every converter of a target (tests and user code replacing built-ins); returns how many.
  size_t erase(const ir::OpName& target);

 private:
  std::map<std::string, std::vector<ConverterEntry>> entries_;
  std::map<std::string, ir::OpName> targets_;
  OverloadResolver resolver_;
};

/// The process-wide registry (Torch-TensorRT's DYNAMO_CONVERTERS).
ConverterRegistry& converters();

}  // namespace kiln::conversion
