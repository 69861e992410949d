#include "kiln/engine/ops/tensor_format.h"

#include <algorithm>

#include "engine/ops/name_table.h"
#include "kiln/support/checked_math.h"

namespace kiln::engine {
namespace {

int64_t block_of(TensorFormat format) {
  return format == TensorFormat::Blocked8c ? 8 : format == TensorFormat::Blocked16c ? 16 : 1;
}

}  // namespace

const char* tensor_format_name(TensorFormat format) {
  static const char* const kNames[] = {"plain", "blocked8c", "blocked16c", "channels_last", "e4m3"};
  return ops::name_of(kNames, format);
}

bool format_applies(TensorFormat format, size_t rank) {
  if (format == TensorFormat::Plain || format == TensorFormat::E4M3) return true;
  return static_cast<int>(format) < kNumTensorFormats && rank >= 3 && rank <= 5;
}

int64_t format_numel(TensorFormat format, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = std::max<int64_t>(dims[i], 0);
    if (i == 1) {
      int64_t b = block_of(format);
      d = (d + b - 1) / b * b;
    }
    n = checked_mul(n, d, "the elements of a tensor");
  }
  return n;
}

size_t format_element_size(TensorFormat format, DType dtype) {
  return format == TensorFormat::E4M3 ? 1 : dtype_size(dtype);
}

int64_t format_bytes(TensorFormat format, DType dtype, const std::vector<int64_t>& dims) {
  return checked_mul(format_numel(format, dims), static_cast<int64_t>(format_element_size(format, dtype)),
                     "the bytes of a tensor");
}

int64_t format_offset(TensorFormat format, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& index) {
  size_t rank = dims.size();
  if (format == TensorFormat::Plain || format == TensorFormat::E4M3 || rank < 3) {
    int64_t off = 0;
    for (size_t i = 0; i < rank; ++i) off = off * dims[i] + index[i];
    return off;
  }
  int64_t spatial = 0, spatial_size = 1;  // flat spatial index and size
  for (size_t i = 2; i < rank; ++i) {
    spatial = spatial * dims[i] + index[i];
    spatial_size *= dims[i];
  }
  int64_t n = index[0], c = index[1], channels = dims[1];
  if (format == TensorFormat::ChannelsLast) return (n * spatial_size + spatial) * channels + c;
  int64_t b = block_of(format), blocks = (channels + b - 1) / b;
  return ((n * blocks + c / b) * spatial_size + spatial) * b + c % b;
}

std::optional<FormatView> format_view(TensorFormat format, const std::vector<int64_t>& dims) {
  const size_t rank = dims.size();
  if (format == TensorFormat::E4M3) return std::nullopt;
  FormatView v;
  auto add = [&](int64_t dim, int64_t stride) {
    v.dims.push_back(dim);
    v.strides.push_back(stride);
  };
  if (format == TensorFormat::Plain || rank < 3) {
    int64_t stride = 1;
    std::vector<int64_t> strides(rank);
    for (size_t i = rank; i-- > 0;) {
      strides[i] = stride;
      stride *= dims[i];
    }
    for (size_t i = 0; i < rank; ++i) {
      v.first.push_back(i);
      add(dims[i], strides[i]);
    }
    v.first.push_back(rank);
    return v;
  }
  int64_t spatial_size = 1;
  for (size_t i = 2; i < rank; ++i) spatial_size *= dims[i];
  const int64_t channels = dims[1];
  // The stride of spatial dim i within one (n, channel block) or one n: the inner spatial sizes times `unit`.
  auto add_spatial = [&](int64_t unit) {
    int64_t inner = unit * spatial_size;
    for (size_t i = 2; i < rank; ++i) {
      inner /= std::max<int64_t>(dims[i], 1);
      v.first.push_back(v.dims.size());
      add(dims[i], inner);
    }
  };
  if (format == TensorFormat::ChannelsLast) {
    v.first.push_back(0);
    add(dims[0], spatial_size * channels);
    v.first.push_back(1);
    add(channels, 1);
    add_spatial(channels);
  } else {
    const int64_t b = block_of(format);
    if (channels % b != 0) return std::nullopt;
    v.first.push_back(0);
    add(dims[0], channels * spatial_size);
    v.first.push_back(1);
    add(channels / b, spatial_size * b);
    add(b, 1);
    add_spatial(b);
  }
  v.first.push_back(v.dims.size());
  return v;
}

}  // namespace kiln::engine
