#include "host_math.h"

#include <algorithm>

#include "kiln/support/error.h"

namespace kiln::lowering::detail {
namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  return strides;
}

// Strides of `t` seen as a tensor of `sizes` under broadcasting (0 where broadcast).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& t_sizes, const std::vector<int64_t>& sizes) {
  const std::vector<int64_t> own = contiguous_strides(t_sizes);
  std::vector<int64_t> out(sizes.size(), 0);
  const size_t offset = sizes.size() - t_sizes.size();
  for (size_t i = 0; i < t_sizes.size(); ++i) out[offset + i] = t_sizes[i] == 1 ? 0 : own[i];
  return out;
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

}  // namespace

std::vector<int64_t> broadcast_static(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
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

HostTensor host_permute(const HostTensor& t, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> in_strides = contiguous_strides(t.sizes());
  std::vector<int64_t> sizes(dims.size());
  std::vector<int64_t> strides(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    sizes[i] = t.sizes()[static_cast<size_t>(dims[i])];
    strides[i] = in_strides[static_cast<size_t>(dims[i])];
  }
  HostTensor out(t.dtype(), sizes);
  const size_t elem = dtype_size(t.dtype());
  uint8_t* dst = out.mutable_data();
  const uint8_t* src = t.data();
  for_each_index(sizes, [&](int64_t i, const std::vector<int64_t>& index) {
    std::copy_n(src + dot(index, strides) * elem, elem, dst + i * static_cast<int64_t>(elem));
  });
  return out;
}

HostTensor host_expand(const HostTensor& t, const std::vector<int64_t>& sizes) {
  const std::vector<int64_t> strides = broadcast_strides(t.sizes(), sizes);
  HostTensor out(t.dtype(), sizes);
  const size_t elem = dtype_size(t.dtype());
  uint8_t* dst = out.mutable_data();
  const uint8_t* src = t.data();
  for_each_index(sizes, [&](int64_t i, const std::vector<int64_t>& index) {
    std::copy_n(src + dot(index, strides) * elem, elem, dst + i * static_cast<int64_t>(elem));
  });
  return out;
}

HostTensor host_binary(const HostTensor& a, const HostTensor& b, DType out_dtype,
                       const std::function<double(double, double)>& fn) {
  const std::vector<int64_t> sizes = broadcast_static(a.sizes(), b.sizes());
  const std::vector<int64_t> sa = broadcast_strides(a.sizes(), sizes);
  const std::vector<int64_t> sb = broadcast_strides(b.sizes(), sizes);
  HostTensor out(out_dtype, sizes);
  for_each_index(sizes, [&](int64_t i, const std::vector<int64_t>& index) {
    out.set_from_double(i, fn(a.get_as_double(dot(index, sa)), b.get_as_double(dot(index, sb))));
  });
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
  const size_t elem = dtype_size(t.dtype());
  uint8_t* dst = out.mutable_data();
  const uint8_t* src = t.data();
  for_each_index(sizes, [&](int64_t i, const std::vector<int64_t>& index) {
    std::copy_n(src + (base + dot(index, strides)) * static_cast<int64_t>(elem), elem,
                dst + i * static_cast<int64_t>(elem));
  });
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

}  // namespace kiln::lowering::detail
