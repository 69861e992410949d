#pragma once
// Conversions between Kiln's types and libtorch's (dtype codes, layouts, devices, host tensors).
// Internal to the runtime layer: includes ATen.

#include <string>

#include <ATen/core/ivalue.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>

#include "kiln/ir/tensor_meta.h"
#include "kiln/support/dtype.h"

namespace kiln::runtime {

/// Kiln dtype <-> c10::ScalarType. from_scalar_type throws kiln::Error(Unsupported) for types Kiln lacks.
c10::ScalarType to_scalar_type(DType dtype);
DType from_scalar_type(c10::ScalarType type);

/// torch.export layout / memory format codes -> libtorch enums. Throws kiln::Error(Unsupported) on codes that
/// have no libtorch equivalent (Unknown).
c10::Layout to_torch_layout(ir::Layout layout);
c10::MemoryFormat to_torch_memory_format(ir::MemoryFormat format);
c10::Device to_torch_device(const ir::Device& device);

/// The first line of an exception's message from libtorch (its what() carries a backtrace after it).
std::string torch_error_message(const std::exception& error);

}  // namespace kiln::runtime
