#pragma once
// The built-in converters: one registration function per op family (src/conversion/converters/<family>.cpp),
// all listed once in src/conversion/converters/converter_table.cpp.

#include <string>
#include <vector>

#include "kiln/conversion/registry.h"

namespace kiln::conversion {

/// One op family of built-in converters.
struct ConverterFamily {
  const char* name;
  void (*register_fn)(ConverterRegistry&);
};

/// Every family, in registration order.
const std::vector<ConverterFamily>& converter_families();
/// Registers every built-in converter into `registry` (converters() is filled so on first use).
void register_builtin_converters(ConverterRegistry& registry);

}  // namespace kiln::conversion
