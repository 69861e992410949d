#pragma once
// TensorMeta: what the program states about a tensor value: dtype, symbolic sizes/strides, device.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/sym_expr.h"
#include "kiln/support/dtype.h"

namespace kiln::ir {

/// torch.export layout codes (schema.py Layout). Kiln handles Strided only.
enum class Layout { Unknown = 0, SparseCoo = 1, SparseCsr = 2, SparseCsc = 3, SparseBsr = 4, SparseBsc = 5,
                    Mkldnn = 6, Strided = 7 };
/// torch.export memory format codes (schema.py MemoryFormat).
enum class MemoryFormat { Unknown = 0, Contiguous = 1, ChannelsLast = 2, ChannelsLast3d = 3, Preserve = 4 };

struct Device {
  std::string type = "cpu";  // "cpu", "cuda", "meta"
  int index = -1;            // -1: none given
  /// "cpu", "cuda:0".
  std::string to_string() const;
  /// Device indices above this are refused (torch's DeviceIndex is an int8).
  static constexpr int64_t kMaxIndex = 127;
  /// A device of `type` (lower-case letters and '_') and `index` (-1 for none, up to kMaxIndex); throws
  /// kiln::Error(InvalidInput) otherwise. Every device Kiln reads goes through here, so each prints to text
  /// that parse() reads back.
  static Device make(std::string type, int64_t index);
  /// Parses "cpu", "cuda", "cuda:1"; throws kiln::Error(InvalidInput).
  static Device parse(const std::string& text);
  bool operator==(const Device&) const = default;
};

struct TensorMeta {
  DType dtype = DType::Float32;
  std::vector<SymExpr> sizes;
  std::vector<SymExpr> strides;  // empty means contiguous (C order) strides
  SymExpr storage_offset = 0;
  Device device;
  bool requires_grad = false;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  /// True when every size is an integer constant.
  bool is_static() const;
  /// The sizes when static.
  std::optional<std::vector<int64_t>> static_sizes() const;
  /// Contiguous strides for `sizes` (symbolic).
  static std::vector<SymExpr> contiguous_strides(const std::vector<SymExpr>& sizes);
  /// A static contiguous meta.
  static TensorMeta make(DType dtype, const std::vector<int64_t>& sizes);
  /// "f32[s77, 3, 16, 16]".
  std::string to_string() const;
  bool operator==(const TensorMeta& other) const;
};

}  // namespace kiln::ir
