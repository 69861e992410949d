#pragma once
// Helpers shared by the reference kernels (engine/ops/<family>/<kind>.cpp): element load/store of TensorViews
// (on support's host math), threads.

#include <cstring>
#include <vector>

#include "kiln/engine/backend.h"
#include "kiln/support/error.h"
#include "kiln/support/host_math.h"

namespace kiln::engine::ops {

/// Element i of `t` as double; writes `v` into element i of `t` (conversions: kiln/support/host_math.h).
inline double load(const TensorView& t, int64_t i) { return load_element(t.data, t.dtype, i); }
inline void store(const TensorView& t, int64_t i, double v) { store_element(t.data, t.dtype, i, v); }

/// Element i of an integer or Bool `t` as int64, exactly (load gives double, inexact beyond 2^53).
int64_t load_int(const TensorView& t, int64_t i);
/// Writes `v` into element i of an integer or Bool `t`, wrapping to an integer dtype's width (Bool: v != 0).
void store_int(const TensorView& t, int64_t i, int64_t v);

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

/// The bytes of a tensor view.
inline uint8_t* bytes(const TensorView& t) { return static_cast<uint8_t*>(t.data); }

/// Index `v` into a dim of size `n` (negative wraps once); throws InvalidInput when out of range.
int64_t checked_index(double v, int64_t n);

/// outer / axis / inner split of dims around `axis`.
struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};
Split split_at(const Dims& d, int64_t axis);

/// The last `ns` (spatial) dims of `d` padded to 3 with leading `fill`s.
std::vector<int64_t> to3(const Dims& d, size_t ns, int64_t fill = 1);
/// A per-spatial-dim vector (empty: `ns` entries of `fill`) padded to 3 with leading `fill`s.
std::vector<int64_t> vec3(std::vector<int64_t> v, size_t ns, int64_t fill);

/// Elements per task of the pointwise kernels.
inline constexpr int64_t kPointwiseGrain = 4096;
/// y = f(x) elementwise (inputs[0] -> outputs[0], any dtypes), on the pool.
void unary_map(KernelArgs& args, const std::function<double(double)>& f);

/// Runs fn(begin, end) over [0, n) on the pool when there is one, else inline.
void parallel(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace kiln::engine::ops
