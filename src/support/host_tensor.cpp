#include "kiln/support/host_tensor.h"

#include <cstring>
#include <new>
#include <limits>

#include "kiln/support/error.h"
#include "kiln/support/host_math.h"

namespace kiln {

int64_t checked_numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, InvalidInput, "negative size ", s, " in tensor shape");
    if (s != 0 && n > std::numeric_limits<int64_t>::max() / s) {
      KILN_FAIL(InvalidInput, "tensor shape overflows 64-bit element count");
    }
    n *= s;
  }
  return n;
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> sizes) : dtype_(dtype), sizes_(std::move(sizes)) {
  int64_t n = checked_numel(sizes_);
  KILN_CHECK(static_cast<uint64_t>(n) <= (uint64_t{1} << 40) / dtype_size(dtype_), InvalidInput,
             "tensor of ", n, " elements is too large");
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype_);
  try {
    bytes_ = std::make_shared<std::vector<uint8_t>>(bytes);
  } catch (const std::bad_alloc&) {
    // Unsupported: this machine cannot hold it (errors have no kind of their own for memory).
    KILN_FAIL(Unsupported, "out of memory allocating ", bytes, " bytes for a ", describe(), " tensor");
  }
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> sizes, std::shared_ptr<const std::vector<uint8_t>> bytes)
    : dtype_(dtype), sizes_(std::move(sizes)), bytes_(std::move(bytes)) {
  int64_t n = checked_numel(sizes_);
  KILN_CHECK(bytes_ != nullptr, Internal, "HostTensor given null storage");
  // Compare element counts rather than multiplying, so a huge shape cannot wrap around to a small byte count.
  const size_t item = dtype_size(dtype_);
  KILN_CHECK(bytes_->size() % item == 0 && bytes_->size() / item == static_cast<uint64_t>(n), InvalidInput,
             "tensor storage holds ", bytes_->size(), " bytes but the ", dtype_name(dtype_), " shape has ", n,
             " elements");
}

HostTensor HostTensor::from_floats(const std::vector<float>& values, std::vector<int64_t> sizes) {
  HostTensor t(DType::Float32, std::move(sizes));
  KILN_CHECK(static_cast<size_t>(t.numel()) == values.size(), InvalidInput, "from_floats: ", values.size(),
             " values for ", t.describe());
  if (!values.empty()) std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(float));
  return t;
}

HostTensor HostTensor::from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> sizes) {
  HostTensor t(DType::Int64, std::move(sizes));
  KILN_CHECK(static_cast<size_t>(t.numel()) == values.size(), InvalidInput, "from_int64s: ", values.size(),
             " values for ", t.describe());
  if (!values.empty()) std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

int64_t HostTensor::numel() const {
  if (!bytes_) return 0;  // an undefined tensor has no elements (not the 1 of a 0-d tensor)
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  return n;
}

uint8_t* HostTensor::mutable_data() {
  if (!bytes_) return nullptr;
  if (bytes_.use_count() > 1) bytes_ = std::make_shared<std::vector<uint8_t>>(*bytes_);
  // The storage is owned by this tensor alone now, so writing through it is safe.
  return const_cast<uint8_t*>(bytes_->data());
}

double HostTensor::get_as_double(int64_t i) const { return load_element(data(), dtype_, i); }

void HostTensor::set_from_double(int64_t i, double value) { store_element(mutable_data(), dtype_, i, value); }

HostTensor HostTensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  HostTensor out(dtype, sizes_);
  int64_t n = numel();
  for (int64_t i = 0; i < n; ++i) out.set_from_double(i, get_as_double(i));
  return out;
}

HostTensor HostTensor::reshaped(std::vector<int64_t> sizes) const {
  KILN_CHECK(checked_numel(sizes) == numel(), InvalidInput, "cannot reshape ", describe(), " to ", sizes.size(),
             "-d shape with a different element count");
  return HostTensor(dtype_, std::move(sizes), bytes_);
}

std::string HostTensor::describe() const {
  std::string s = std::string(dtype_name(dtype_)) + "[";
  for (size_t i = 0; i < sizes_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes_[i]);
  }
  return s + "]";
}

}  // namespace kiln
