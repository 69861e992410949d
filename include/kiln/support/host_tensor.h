#pragma once
// HostTensor: a dense, C-ordered tensor in host memory with shared, immutable-by-convention storage.
// Used for weights, npz arrays and constants across every layer (it knows nothing of libtorch).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/support/dtype.h"

namespace kiln {

class HostTensor {
 public:
  HostTensor() = default;
  /// Allocates zero-filled storage for `sizes` elements of `dtype`. Sizes must be >= 0.
  HostTensor(DType dtype, std::vector<int64_t> sizes);
  /// Wraps existing bytes (shared, not copied). `bytes` must hold exactly numel * dtype_size bytes.
  HostTensor(DType dtype, std::vector<int64_t> sizes, std::shared_ptr<const std::vector<uint8_t>> bytes);

  /// Copies `values` into a new float32 tensor of the given sizes (numel must match).
  static HostTensor from_floats(const std::vector<float>& values, std::vector<int64_t> sizes);
  static HostTensor from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> sizes);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const;
  size_t nbytes() const { return bytes_ ? bytes_->size() : 0; }
  bool defined() const { return bytes_ != nullptr; }

  const uint8_t* data() const { return bytes_ ? bytes_->data() : nullptr; }
  /// Mutable access; copies the storage first if it is shared with another HostTensor.
  uint8_t* mutable_data();
  template <typename T>
  const T* data_as() const { return reinterpret_cast<const T*>(data()); }
  template <typename T>
  T* mutable_data_as() { return reinterpret_cast<T*>(mutable_data()); }

  /// Element i converted to double / written from double (any dtype; for tests and folding).
  double get_as_double(int64_t i) const;
  void set_from_double(int64_t i, double value);
  /// A new tensor of another dtype with every element converted.
  HostTensor to(DType dtype) const;
  /// A new tensor with the same bytes and other sizes (numel must match).
  HostTensor reshaped(std::vector<int64_t> sizes) const;

  /// "f32[2, 3]".
  std::string describe() const;

 private:
  DType dtype_ = DType::Float32;
  std::vector<int64_t> sizes_;
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
};

/// Product of sizes; throws kiln::Error(InvalidInput) on a negative size or overflow.
int64_t checked_numel(const std::vector<int64_t>& sizes);

}  // namespace kiln
