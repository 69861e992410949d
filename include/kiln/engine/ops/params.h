#pragma once
// What every layer kind's params header (kiln/engine/ops/<family>/<kind>.h) builds on: Dims and the field
// visitor. Each params struct lists its fields once in visit(), which drives plan serialization, layer
// signatures (timing cache keys) and printing, so adding a field is one line.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/support/dtype.h"

namespace kiln::engine {

/// Tensor dimensions; -1 marks a dimension only known at run time.
using Dims = std::vector<int64_t>;

/// Visitor helper: v(name, field) for each field. Visitors accept int64_t, double, bool, std::string,
/// DType, enums (as their underlying integer), std::vector of those, and nested structs with visit().
#define KILN_VISIT_FIELDS(...) \
  template <typename V>        \
  void visit(V& v) {           \
    __VA_ARGS__;               \
  }

}  // namespace kiln::engine
