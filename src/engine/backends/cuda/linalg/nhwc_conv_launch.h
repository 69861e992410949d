#pragma once
// Launch functions of Kiln's own channels-last convolution kernels (depthwise.cu, grouped.cu), shared by nvcc
// and g++ (launch.h says how).

#include "engine/backends/cuda/launch.h"
#include "engine/backends/cuda/linalg/epilogue.h"

namespace kiln::engine::cuda {

/// A 2-D forward convolution of channels-last tensors: x [n, h, w, c_in], y [n, oh, ow, c_out], `groups`
/// groups (c_in / groups input and c_out / groups output channels each), all dense, every element count below
/// 2^31. Padding is ph rows above and pw columns left (the rest follows from oh and ow). Weights: see each
/// launch.
struct NhwcConvParams {
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  int dtype = kF32;  // of x, w and y: kF32, kF16 or kBF16
  int n = 0, h = 0, w_in = 0, c_in = 0, c_out = 0, groups = 1, oh = 0, ow = 0;
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

// Each launch enqueues y = chain(conv(x, w)) on `stream`: each result, summed in float, goes through `chain`
// (the post-op epilogue over y: bias, activations, residuals; n_instr = 0 for none) before it is stored once.

/// Depthwise: groups = c_in = c_out; weights [kh, kw, c] (the channel innermost). 16-byte vectors of channels
/// where c and the pointers allow, else one channel per thread.
void launch_depthwise_nhwc(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream);

/// Grouped: weights [kh, kw, c_in / groups, c_out] (the output channel innermost). 16-byte vectors of input
/// and output channels where both group widths, the channel counts and the pointers allow, else one output
/// channel per thread.
void launch_grouped_nhwc(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream);

}  // namespace kiln::engine::cuda
