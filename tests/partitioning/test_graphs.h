#pragma once
// Shared helpers of the partitioning tests: a registry of stub converters and IR text parsing.

#include <memory>
#include <string>
#include <vector>

#include "kiln/conversion/registry.h"
#include "kiln/ir/text.h"

namespace kiln::partitioning::testing {

/// A converter that is never called (partitioning only asks whether one exists).
inline conversion::ConverterImpl stub_converter() {
  return [](conversion::ConversionContext&, const ir::Node&, const conversion::ConverterArgs&) {
    return std::vector<engine::Tensor*>{};
  };
}

/// Registers a stub converter for each key, tagging it with registry name `tag`.
inline void register_stubs(conversion::ConverterRegistry& registry, const std::vector<std::string>& keys,
                           const std::string& tag = "test") {
  for (const std::string& key : keys) {
    conversion::RegistrationOptions options;
    options.registry_name = tag;
    registry.register_converter(key, stub_converter(), options);
  }
}

inline std::unique_ptr<ir::Graph> parse(const std::string& text) { return ir::parse_graph(text); }

}  // namespace kiln::partitioning::testing
