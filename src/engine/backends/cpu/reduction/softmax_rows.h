#pragma once
// The row passes of a softmax over contiguous floats, shared by the Softmax kernel and the attention
// kernel's score rows (reduction/softmax.cpp holds them, compiled for AVX-512, AVX2 and baseline x86-64).

#include <cstdint>

namespace kiln::engine::cpu::fast {

/// The largest of x[0, n) (-inf for n = 0), as `m > x ? m : x` from -inf in 16 lanes.
float row_max(const float* x, int64_t n);

/// y[i] = exp(x[i] - m) for i in [0, n); returns their sum (16 partial sums; a tail of n % 16 values runs as
/// one padded vector). Give it separate x and y: GCC versions the loop for overlap, and in place it runs the
/// scalar version (3x slower).
float exp_sum(const float* x, float* y, int64_t n, float m);

/// y[i] *= f.
void scale_row(float* y, int64_t n, float f);

}  // namespace kiln::engine::cpu::fast
