#include "engine/backends/cpu/movement/strided_copy.h"

#include <algorithm>
#include <cstring>

namespace kiln::engine::cpu::fast {
namespace {

/// Rows of at least this many bytes per task when the pool splits a copy (smaller copies run on the caller).
constexpr int64_t kBytesPerTask = 256 * 1024;  // 15-25 us of copying (see onednn_common.h, kBytesPerThread)

/// Rows [begin, end) of the plan: row r of the output starts at r * d[0] elements.
template <typename T>
void copy_rows(const CopyPlan& p, const T* in, T* out, int64_t begin, int64_t end) {
  const size_t outer = p.d.size() - 1;
  // The input offset of row `begin`, and the odometer over the outer dims from there.
  std::vector<int64_t> idx(outer, 0);
  int64_t off = 0, r = begin;
  for (size_t k = 1; k <= outer; ++k) {
    idx[k - 1] = r % p.d[k];
    r /= p.d[k];
    off += idx[k - 1] * p.st[k];
  }
  const int64_t n = p.d[0], s = p.st[0];
  T* y = out + begin * n;
  for (int64_t row = begin; row < end; ++row, y += n) {
    const T* x = in + off;
    if (s == 1) {
      std::memcpy(y, x, static_cast<size_t>(n) * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = x[i * s];
    }
    for (size_t k = 0; k < outer; ++k) {  // next row
      off += p.st[k + 1];
      if (++idx[k] < p.d[k + 1]) break;
      off -= p.st[k + 1] * p.d[k + 1];
      idx[k] = 0;
    }
  }
}

template <typename T>
void copy(const CopyPlan& p, const void* in, void* out, ThreadPool* pool) {
  const auto* x = static_cast<const T*>(in);
  auto* y = static_cast<T*>(out);
  const int64_t row_bytes = p.d[0] * static_cast<int64_t>(sizeof(T));
  const int64_t grain = std::max<int64_t>(1, kBytesPerTask / std::max<int64_t>(row_bytes, 1));
  if (!pool || pool->size() == 1 || p.rows <= grain) {
    copy_rows(p, x, y, 0, p.rows);
    return;
  }
  pool->parallel_for(p.rows, grain, [&](int64_t b, int64_t e) { copy_rows(p, x, y, b, e); });
}

}  // namespace

CopyPlan plan_copy(const Dims& dims, const std::vector<int64_t>& strides) {
  CopyPlan p;
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] == 1) continue;
    if (!p.d.empty() && strides[k] == p.st.back() * p.d.back()) {
      p.d.back() *= dims[k];  // contiguous with the inner dim in the input, as it is in the output
      continue;
    }
    p.d.push_back(dims[k]);
    p.st.push_back(strides[k]);
  }
  if (p.d.empty()) {  // one element (or a tensor of size-1 dims)
    p.d.push_back(1);
    p.st.push_back(1);
  }
  p.rows = 1;
  for (size_t k = 1; k < p.d.size(); ++k) p.rows *= p.d[k];
  return p;
}

void strided_copy(const CopyPlan& plan, size_t element_size, const void* in, void* out, ThreadPool* pool) {
  switch (element_size) {
    case 1: copy<uint8_t>(plan, in, out, pool); break;
    case 2: copy<uint16_t>(plan, in, out, pool); break;
    case 4: copy<uint32_t>(plan, in, out, pool); break;
    default: copy<uint64_t>(plan, in, out, pool); break;
  }
}

bool strided_copy_applies(const LayerInfo& info, std::string* why) {
  const size_t es = dtype_size(info.inputs[0].dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8) return refuse(why, std::to_string(es) + "-byte elements");
  if (info.inputs[0].format != TensorFormat::Plain || info.outputs[0].format != TensorFormat::Plain) {
    return refuse(why, "formats other than plain");
  }
  return true;
}

}  // namespace kiln::engine::cpu::fast
