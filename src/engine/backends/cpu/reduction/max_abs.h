#pragma once
// The largest magnitude of a float buffer, with NaN and infinity reported as infinity: the scan behind the
// oneDNN convolution's max-based ReLU (onednn/max_relu.h). reduction/max_abs.cpp, compiled for AVX-512, AVX2
// and baseline x86-64.

#include <cstdint>

#include "kiln/engine/thread_pool.h"

namespace kiln::engine::cpu::fast {

/// max |v[i]| over i in [0, n) (0 for n = 0), or +infinity when any v[i] is NaN or infinite. Exact: the bits of
/// |v| with the sign cleared order as unsigned integers like the values, with infinity and then NaN above
/// every finite value. Runs on `pool` (may be null) for large n.
float max_abs_or_inf(const float* v, int64_t n, ThreadPool* pool);

}  // namespace kiln::engine::cpu::fast
