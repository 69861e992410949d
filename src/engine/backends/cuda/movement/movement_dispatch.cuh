#pragma once
// Element types of the data-movement kernels: a copy moves bytes, so a kernel is instantiated per element
// size only (1, 2, 4, 8 bytes, and 16 for vectors of several elements), never per dtype.

#include <cuda_runtime.h>

#include <type_traits>

#include "engine/backends/cuda/index_math.h"

namespace kiln::engine::cuda {

/// Calls f(static_cast<E*>(nullptr)) with E the unsigned type (uint4 for 16) of `elem_size` bytes.
template <typename F>
void by_size(int elem_size, F&& f) {
  switch (elem_size) {
    case 1: f(static_cast<unsigned char*>(nullptr)); break;
    case 2: f(static_cast<unsigned short*>(nullptr)); break;
    case 4: f(static_cast<unsigned int*>(nullptr)); break;
    case 16: f(static_cast<uint4*>(nullptr)); break;
    default: f(static_cast<unsigned long long*>(nullptr)); break;
  }
}

/// The element type named by a by_size tag.
template <typename Tag>
using ElementOf = std::remove_pointer_t<Tag>;

}  // namespace kiln::engine::cuda
