#pragma once
// Names of enum values from a table indexed by the value ("?" outside it).

#include <cstddef>

namespace kiln::engine::ops {

template <typename T, size_t N>
const char* name_of(const char* const (&names)[N], T value) {
  size_t i = static_cast<size_t>(value);
  return i < N ? names[i] : "?";
}

}  // namespace kiln::engine::ops
