#pragma once
// The built-in converters: one registration function per group of related ops, in a file named after the
// group under the op family of the layers it builds (src/conversion/converters/<family>/<group>.cpp; the
// families are the engine's: pointwise, movement, reduction, linalg, attention, spatial; docs/engine.md), all
// listed once in src/conversion/converters/converter_table.cpp.

#include <string>
#include <vector>

#include "kiln/conversion/registry.h"

namespace kiln::conversion {

/// One group of built-in converters.
struct ConverterGroup {
  /// The op family (folder under converters/); empty for groups outside the taxonomy (SymInt arithmetic).
  const char* family;
  /// The group (its file's name).
  const char* name;
  void (*register_fn)(ConverterRegistry&);
};

/// Every group, in registration order.
const std::vector<ConverterGroup>& converter_groups();
/// Registers every built-in converter into `registry` (converters() is filled so on first use).
void register_builtin_converters(ConverterRegistry& registry);

}  // namespace kiln::conversion
