#include "kiln/support/host_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kiln/support/error.h"

namespace kiln {
namespace {

template <typename T>
T to_int(double v) {
  if (std::isnan(v)) return 0;
  double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Calls fn(linear index, multi-index) for each element of `sizes` in C order.
template <typename Fn>
void for_each_index(const std::vector<int64_t>& sizes, Fn fn) {
  const int64_t n = checked_numel(sizes);
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(i, index);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}

int64_t dot(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i) offset += index[i] * strides[i];
  return offset;
}

// Copies element offsets[i] of `t` to element i of `out` (same dtype, allocated first so that its size is
// checked before the offsets are computed).
void copy_elements(const HostTensor& t, HostTensor& out, const std::vector<int64_t>& offsets) {
  const size_t elem = dtype_size(t.dtype());
  uint8_t* dst = out.mutable_data();
  const uint8_t* src = t.data();
  for (size_t i = 0; i < offsets.size(); ++i) std::copy_n(src + offsets[i] * elem, elem, dst + i * elem);
}

}  // namespace

void store_element(void* data, DType dtype, int64_t i, double v) {
  uint8_t* p = static_cast<uint8_t*>(data) + static_cast<size_t>(i) * dtype_size(dtype);
  switch (dtype) {
    case DType::Float32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); return; }
    case DType::Float64: std::memcpy(p, &v, 8); return;
    case DType::Float16: { uint16_t x = float_to_half(static_cast<float>(v)); std::memcpy(p, &x, 2); return; }
    case DType::BFloat16: { uint16_t x = float_to_bfloat16(static_cast<float>(v)); std::memcpy(p, &x, 2); return; }
    case DType::Int64: { int64_t x = to_int<int64_t>(v); std::memcpy(p, &x, 8); return; }
    case DType::Int32: { int32_t x = to_int<int32_t>(v); std::memcpy(p, &x, 4); return; }
    case DType::Int16: { int16_t x = to_int<int16_t>(v); std::memcpy(p, &x, 2); return; }
    case DType::Int8: { int8_t x = to_int<int8_t>(v); std::memcpy(p, &x, 1); return; }
    case DType::UInt8: *p = to_int<uint8_t>(v); return;
    case DType::Bool: *p = v != 0 ? 1 : 0; return;
  }
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  return strides;
}

std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    KILN_CHECK(x == y || x == 1 || y == 1, InvalidInput, "shapes do not broadcast (", x, " vs ", y, ")");
    out[rank - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in_sizes, const std::vector<int64_t>& out_sizes) {
  size_t r = out_sizes.size();
  size_t off = r - in_sizes.size();
  std::vector<int64_t> in_strides = contiguous_strides(in_sizes);
  std::vector<int64_t> bstride(r, 0);
  for (size_t i = 0; i < in_sizes.size(); ++i) bstride[off + i] = in_sizes[i] == 1 ? 0 : in_strides[i];
  int64_t n = 1;
  for (int64_t d : out_sizes) n *= d;
  std::vector<int64_t> result(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  int64_t cur = 0;
  for (int64_t e = 0; e < n; ++e) {
    result[e] = cur;
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++idx[d] < out_sizes[d]) { cur += bstride[d]; break; }
      cur -= bstride[d] * (out_sizes[d] - 1);
      idx[d] = 0;
    }
  }
  return result;
}

HostTensor host_permute(const HostTensor& t, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> in_strides = contiguous_strides(t.sizes());
  std::vector<int64_t> sizes(dims.size());
  std::vector<int64_t> strides(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    sizes[i] = t.sizes()[static_cast<size_t>(dims[i])];
    strides[i] = in_strides[static_cast<size_t>(dims[i])];
  }
  HostTensor out(t.dtype(), sizes);
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(out.numel()));
  for_each_index(sizes, [&](int64_t, const std::vector<int64_t>& index) { offsets.push_back(dot(index, strides)); });
  copy_elements(t, out, offsets);
  return out;
}

HostTensor host_expand(const HostTensor& t, const std::vector<int64_t>& sizes) {
  HostTensor out(t.dtype(), sizes);
  copy_elements(t, out, broadcast_offsets(t.sizes(), sizes));
  return out;
}

HostTensor host_binary(const HostTensor& a, const HostTensor& b, DType out_dtype,
                       const std::function<double(double, double)>& fn) {
  const std::vector<int64_t> sizes = broadcast_shape(a.sizes(), b.sizes());
  HostTensor out(out_dtype, sizes);
  const std::vector<int64_t> oa = broadcast_offsets(a.sizes(), sizes);
  const std::vector<int64_t> ob = broadcast_offsets(b.sizes(), sizes);
  for (size_t i = 0; i < oa.size(); ++i) {
    out.set_from_double(static_cast<int64_t>(i), fn(a.get_as_double(oa[i]), b.get_as_double(ob[i])));
  }
  return out;
}

HostTensor host_unary(const HostTensor& t, DType out_dtype, const std::function<double(double)>& fn) {
  HostTensor out(out_dtype, t.sizes());
  for (int64_t i = 0; i < t.numel(); ++i) out.set_from_double(i, fn(t.get_as_double(i)));
  return out;
}

HostTensor host_slice(const HostTensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  std::vector<int64_t> sizes = t.sizes();
  const int64_t count = end > start ? (end - start + step - 1) / step : 0;
  sizes[static_cast<size_t>(dim)] = count;
  std::vector<int64_t> strides = contiguous_strides(t.sizes());
  const int64_t base = start * strides[static_cast<size_t>(dim)];
  strides[static_cast<size_t>(dim)] *= step;
  HostTensor out(t.dtype(), sizes);
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(out.numel()));
  for_each_index(sizes, [&](int64_t, const std::vector<int64_t>& index) {
    offsets.push_back(base + dot(index, strides));
  });
  copy_elements(t, out, offsets);
  return out;
}

HostTensor host_cat(const std::vector<HostTensor>& ts, int64_t dim, DType out_dtype) {
  KILN_CHECK(!ts.empty(), InvalidInput, "cat of no tensors");
  std::vector<int64_t> sizes = ts[0].sizes();
  int64_t total = 0;
  for (const HostTensor& t : ts) total += t.sizes()[static_cast<size_t>(dim)];
  sizes[static_cast<size_t>(dim)] = total;
  HostTensor out(out_dtype, sizes);
  const std::vector<int64_t> out_strides = contiguous_strides(sizes);
  int64_t offset = 0;
  for (const HostTensor& t : ts) {
    for_each_index(t.sizes(), [&](int64_t i, const std::vector<int64_t>& index) {
      std::vector<int64_t> at = index;
      at[static_cast<size_t>(dim)] += offset;
      out.set_from_double(dot(at, out_strides), t.get_as_double(i));
    });
    offset += t.sizes()[static_cast<size_t>(dim)];
  }
  return out;
}

}  // namespace kiln
