#pragma once
// Helpers shared by the reference kernels: element load/store of TensorViews (on support's host math), threads.

#include <cstring>
#include <vector>

#include "kiln/engine/backend.h"
#include "kiln/support/error.h"
#include "kiln/support/host_math.h"

namespace kiln::engine::ref {

/// Element i of `t` as double; writes `v` into element i of `t` (conversions: kiln/support/host_math.h).
inline double load(const TensorView& t, int64_t i) { return load_element(t.data, t.dtype, i); }
inline void store(const TensorView& t, int64_t i, double v) { store_element(t.data, t.dtype, i, v); }

/// All elements as doubles / written from doubles.
std::vector<double> load_all(const TensorView& t);
void store_all(const TensorView& t, const std::vector<double>& values);
/// All elements as floats / written from floats (fast path for fp32).
std::vector<float> load_floats(const TensorView& t);
void store_floats(const TensorView& t, const std::vector<float>& values);
std::vector<float> host_floats(const HostTensor& t);

// Strides, element counts and broadcasting are support's host math.
using kiln::broadcast_offsets;
using kiln::contiguous_strides;

/// Runs fn(begin, end) over [0, n) on the pool when there is one, else inline.
void parallel(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace kiln::engine::ref
