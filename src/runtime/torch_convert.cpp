#include "runtime/torch_convert.h"

#include <cstring>

#include <ATen/ATen.h>

#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"

namespace kiln::runtime {

c10::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return c10::ScalarType::Float;
    case DType::Float16: return c10::ScalarType::Half;
    case DType::BFloat16: return c10::ScalarType::BFloat16;
    case DType::Float64: return c10::ScalarType::Double;
    case DType::Int64: return c10::ScalarType::Long;
    case DType::Int32: return c10::ScalarType::Int;
    case DType::Int16: return c10::ScalarType::Short;
    case DType::Int8: return c10::ScalarType::Char;
    case DType::UInt8: return c10::ScalarType::Byte;
    case DType::Bool: return c10::ScalarType::Bool;
  }
  KILN_FAIL(Internal, "unknown kiln dtype ", static_cast<int>(dtype));
}

DType from_scalar_type(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float: return DType::Float32;
    case c10::ScalarType::Half: return DType::Float16;
    case c10::ScalarType::BFloat16: return DType::BFloat16;
    case c10::ScalarType::Double: return DType::Float64;
    case c10::ScalarType::Long: return DType::Int64;
    case c10::ScalarType::Int: return DType::Int32;
    case c10::ScalarType::Short: return DType::Int16;
    case c10::ScalarType::Char: return DType::Int8;
    case c10::ScalarType::Byte: return DType::UInt8;
    case c10::ScalarType::Bool: return DType::Bool;
    default: break;
  }
  KILN_FAIL(Unsupported, "libtorch dtype ", c10::toString(type), " has no Kiln equivalent");
}

c10::Layout to_torch_layout(ir::Layout layout) {
  switch (layout) {
    case ir::Layout::Strided: return c10::kStrided;
    case ir::Layout::SparseCoo: return c10::kSparse;
    case ir::Layout::SparseCsr: return c10::kSparseCsr;
    case ir::Layout::SparseCsc: return c10::kSparseCsc;
    case ir::Layout::SparseBsr: return c10::kSparseBsr;
    case ir::Layout::SparseBsc: return c10::kSparseBsc;
    case ir::Layout::Mkldnn: return c10::kMkldnn;
    case ir::Layout::Unknown: break;
  }
  KILN_FAIL(Unsupported, "layout code ", static_cast<int>(layout), " has no libtorch equivalent");
}

c10::MemoryFormat to_torch_memory_format(ir::MemoryFormat format) {
  switch (format) {
    case ir::MemoryFormat::Contiguous: return c10::MemoryFormat::Contiguous;
    case ir::MemoryFormat::ChannelsLast: return c10::MemoryFormat::ChannelsLast;
    case ir::MemoryFormat::ChannelsLast3d: return c10::MemoryFormat::ChannelsLast3d;
    case ir::MemoryFormat::Preserve: return c10::MemoryFormat::Preserve;
    case ir::MemoryFormat::Unknown: break;
  }
  KILN_FAIL(Unsupported, "memory format code ", static_cast<int>(format), " has no libtorch equivalent");
}

c10::Device to_torch_device(const ir::Device& device) {
  try {
    c10::Device result(device.type);
    if (device.index >= 0) result.set_index(static_cast<c10::DeviceIndex>(device.index));
    return result;
  } catch (const std::exception& e) {
    KILN_FAIL(InvalidInput, "device '", device.to_string(), "' is not known to libtorch: ", torch_error_message(e));
  }
}

std::string torch_error_message(const std::exception& error) {
  std::string text;
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
    text = c10_error->what_without_backtrace();
  } else {
    text = error.what();
  }
  // Keep the first non-empty line: libtorch appends backtraces and "Exception raised from" lines.
  size_t start = text.find_first_not_of("\n\r ");
  if (start == std::string::npos) return "unknown libtorch error";
  size_t end = text.find_first_of("\n\r", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

at::Tensor to_torch(const HostTensor& t) {
  KILN_CHECK(t.defined(), InvalidInput, "cannot convert an undefined HostTensor to a libtorch tensor");
  at::Tensor result = at::empty(t.sizes(), at::TensorOptions().dtype(to_scalar_type(t.dtype())));
  if (t.nbytes() > 0) std::memcpy(result.data_ptr(), t.data(), t.nbytes());
  return result;
}

HostTensor from_torch(const at::Tensor& t) {
  KILN_CHECK(t.defined(), InvalidInput, "cannot convert an undefined libtorch tensor to a HostTensor");
  at::Tensor dense = t;
  KILN_CHECK(dense.layout() == c10::kStrided, Unsupported, "only strided libtorch tensors convert to HostTensor");
  if (!dense.device().is_cpu()) dense = dense.cpu();
  if (dense.is_conj()) dense = dense.resolve_conj();
  if (dense.is_neg()) dense = dense.resolve_neg();
  dense = dense.contiguous();
  std::vector<int64_t> sizes(dense.sizes().begin(), dense.sizes().end());
  HostTensor result(from_scalar_type(dense.scalar_type()), sizes);
  if (result.nbytes() > 0) std::memcpy(result.mutable_data(), dense.data_ptr(), result.nbytes());
  return result;
}

}  // namespace kiln::runtime
