// The converter registry: registration, validated lookup and inspection.

#include "kiln/conversion/registry.h"

#include "kiln/conversion/converter_table.h"

#include <algorithm>
#include <sstream>

#include "kiln/support/error.h"

namespace kiln::conversion {
namespace {

// Python operator namespaces: their callables have no overloads. Converters may also be keyed by the sympy
// functions of torch.export's symbolic nodes.
bool is_python_namespace(const std::string& ns) {
  return ir::is_python_namespace(ns) || ns == "_sympy" || ns == "sympy";
}

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

const char* to_string(Priority p) { return p == Priority::High ? "high" : "standard"; }

}  // namespace

void ConverterRegistry::register_converter(std::string_view key, ConverterImpl impl, RegistrationOptions options) {
  if (!options.enabled) return;
  const std::string text = ir::normalize_op_spelling(key);
  const std::vector<std::string> parts = split_dots(text);
  const bool well_formed =
      (parts.size() == 2 || parts.size() == 3) &&
      std::none_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); });
  KILN_CHECK(well_formed, InvalidInput, "converter key '", key,
             "' is not an operator overload such as 'aten.relu.default'");
  ir::OpName target;
  target.ns = ir::canonical_op_namespace(parts[0]);
  target.name = parts[1];
  if (parts.size() == 3) {
    target.overload = parts[2];
  } else if (!is_python_namespace(parts[0])) {
    // A bare packet: allowed only when its overloads are "default" (+ "out"), as for OpOverloadPacket keys.
    std::optional<std::vector<std::string>> overloads;
    if (resolver_) overloads = resolver_(text);
    KILN_CHECK(overloads.has_value(), InvalidInput, "converter key '", key,
               "' is an overload packet; register an overload such as '", text, ".default'");
    const bool only_default = std::all_of(overloads->begin(), overloads->end(),
                                          [](const std::string& o) { return o == "default" || o == "out"; });
    if (!only_default || std::find(overloads->begin(), overloads->end(), "default") == overloads->end()) {
      std::string list;
      for (const std::string& o : *overloads) list += (list.empty() ? "" : ", ") + o;
      KILN_FAIL(InvalidInput, "converter key '", key, "' is an overload packet with several overloads (", list,
                "); register each overload, e.g. '", text, ".", overloads->empty() ? "default" : overloads->front(),
                "'");
    }
    target.overload = "default";
  }
  KILN_CHECK(static_cast<bool>(impl), InvalidInput, "converter for '", key, "' has no implementation");

  ConverterEntry entry;
  entry.support.converter_implementation = std::move(impl);
  entry.support.capability_validator = std::move(options.capability_validator);
  entry.support.supports_dynamic_shapes = options.supports_dynamic_shapes;
  entry.support.requires_output_allocator = options.requires_output_allocator;
  entry.registry_name = std::move(options.registry_name);
  entry.priority = options.priority;

  const std::string name = ir::canonical_op_name(target);
  targets_.emplace(name, target);
  std::vector<ConverterEntry>& list = entries_[name];
  if (options.priority == Priority::High) {
    list.insert(list.begin(), std::move(entry));
  } else {
    list.push_back(std::move(entry));
  }
}

LookupResult ConverterRegistry::lookup(const ir::Node& node, const settings::CompilationSettings& settings) const {
  LookupResult result;
  const std::string name = ir::canonical_op_name(node.target());
  if (ir::op_in_set(node.target(), settings.torch_executed_ops)) {
    result.miss = LookupMiss::Disallowed;
    result.reason = name + " is in torch_executed_ops";
    return result;
  }
  auto it = entries_.find(name);
  if (it == entries_.end() || it->second.empty()) {
    result.miss = LookupMiss::NoConverter;
    result.reason = "no converter registered for " + name;
    return result;
  }
  const bool dynamic = has_dynamic_shapes(node);
  bool any_validator_passed = false;
  std::vector<size_t> rejected;
  for (size_t i = 0; i < it->second.size(); ++i) {
    const ConverterEntry& entry = it->second[i];
    const ConverterSupport& support = entry.support;
    if (support.capability_validator && !support.capability_validator(node, settings)) {
      rejected.push_back(i);
      continue;
    }
    any_validator_passed = true;
    if (dynamic && !support.supports_dynamic_shapes && !settings.assume_dynamic_shape_support) continue;
    ConverterMatch match;
    match.converter_implementation = support.converter_implementation;
    match.flags.supports_dynamic_shapes = support.supports_dynamic_shapes;
    match.flags.requires_output_allocator = support.requires_output_allocator;
    match.registry_name = entry.registry_name;
    match.candidate_index = i;
    result.match = std::move(match);
    return result;
  }
  if (any_validator_passed) {
    result.miss = LookupMiss::DynamicShapes;
    result.reason = "node has dynamic shapes and no converter for " + name + " that accepts it supports them";
  } else {
    result.miss = LookupMiss::ValidatorRejected;
    std::ostringstream msg;
    msg << "the capability validator of every converter for " << name << " rejected the node (candidate";
    msg << (rejected.size() == 1 ? " " : "s ");
    for (size_t k = 0; k < rejected.size(); ++k) {
      msg << (k ? ", " : "") << "#" << rejected[k] << " from " << it->second[rejected[k]].registry_name << " ("
          << to_string(it->second[rejected[k]].priority) << ")";
    }
    msg << ")";
    result.reason = msg.str();
  }
  return result;
}

std::optional<ConverterMatch> ConverterRegistry::get(const ir::Node& node,
                                                     const settings::CompilationSettings& settings) const {
  return lookup(node, settings).match;
}

ConverterMatch ConverterRegistry::at(const ir::Node& node, const settings::CompilationSettings& settings) const {
  LookupResult result = lookup(node, settings);
  if (!result.match) {
    throw Error(ErrorKind::Unsupported, "no usable converter: " + result.reason,
                ErrorContext{"", node.name(), ir::canonical_op_name(node.target()), ""});
  }
  return std::move(*result.match);
}

bool ConverterRegistry::contains(const ir::Node& node, const settings::CompilationSettings& settings) const {
  return lookup(node, settings).match.has_value();
}

bool ConverterRegistry::contains(const ir::OpName& target) const {
  auto it = entries_.find(ir::canonical_op_name(target));
  return it != entries_.end() && !it->second.empty();
}

std::vector<ir::OpName> ConverterRegistry::unique_targets() const {
  std::vector<ir::OpName> out;
  for (const auto& [name, list] : entries_) {
    if (!list.empty()) out.push_back(targets_.at(name));
  }
  return out;
}

std::vector<ConverterEntry> ConverterRegistry::get_all_converters_with_target(const ir::OpName& target) const {
  auto it = entries_.find(ir::canonical_op_name(target));
  return it == entries_.end() ? std::vector<ConverterEntry>{} : it->second;
}

std::map<std::string, std::map<std::string, int>> ConverterRegistry::get_converter_support_info() const {
  std::map<std::string, std::map<std::string, int>> info;
  for (const auto& [name, list] : entries_) {
    for (const ConverterEntry& e : list) ++info[name][e.registry_name];
  }
  return info;
}

std::string ConverterRegistry::display_all_available_converters() const {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"target", "#", "registry", "priority", "validator", "dynamic", "output_allocator"});
  for (const auto& [name, list] : entries_) {
    for (size_t i = 0; i < list.size(); ++i) {
      const ConverterEntry& e = list[i];
      rows.push_back({i == 0 ? name : "", std::to_string(i), e.registry_name, to_string(e.priority),
                      e.support.capability_validator ? "yes" : "-", e.support.supports_dynamic_shapes ? "yes" : "-",
                      e.support.requires_output_allocator ? "yes" : "-"});
    }
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream out;
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < rows[r].size(); ++c) {
      out << rows[r][c];
      if (c + 1 < rows[r].size()) out << std::string(width[c] - rows[r][c].size() + 2, ' ');
    }
    out << "\n";
    if (r == 0) {
      size_t total = 0;
      for (size_t w : width) total += w + 2;
      out << std::string(total - 2, '-') << "\n";
    }
  }
  out << entries_.size() << " targets, " << size() << " converters\n";
  return out.str();
}

size_t ConverterRegistry::size() const {
  size_t n = 0;
  for (const auto& [name, list] : entries_) n += list.size();
  return n;
}

size_t ConverterRegistry::erase(const ir::OpName& target) {
  const std::string name = ir::canonical_op_name(target);
  auto it = entries_.find(name);
  if (it == entries_.end()) return 0;
  size_t n = it->second.size();
  entries_.erase(it);
  targets_.erase(name);
  return n;
}

ConverterRegistry& converters() {
  // Filled with the built-in converter families on first use (src/conversion/converters/converter_table.cpp).
  static ConverterRegistry registry = [] {
    ConverterRegistry r;
    register_builtin_converters(r);
    return r;
  }();
  return registry;
}

}  // namespace kiln::conversion
