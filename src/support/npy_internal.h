#pragma once
// Internal to the npy/npz code: reading a .npy held in a buffer the reader may consume.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/support/host_tensor.h"

namespace kiln::npy_internal {

/// As read_npy, reusing `bytes` as the tensor's storage (the header is erased in place).
HostTensor read_npy_owned(std::vector<uint8_t> bytes, const std::string& label);

}  // namespace kiln::npy_internal
