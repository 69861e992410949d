#pragma once
// Launch function of the depthwise convolution kernel (depthwise.cu), shared by nvcc and g++ (launch.h says
// how).

#include "engine/backends/cuda/launch.h"
#include "engine/backends/cuda/linalg/epilogue.h"

namespace kiln::engine::cuda {

/// A 2-D depthwise convolution (one filter per channel, groups = channels) of channels-last tensors:
/// x [n, h, w, c], weights [kh, kw, c] (the channel innermost), y [n, oh, ow, c], all dense, every element
/// count below 2^31. Padding is ph rows above and pw columns left (the rest follows from oh and ow).
struct DepthwiseParams {
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  int dtype = kF32;  // of x, w and y: kF32, kF16 or kBF16
  int n = 0, h = 0, w_in = 0, c = 0, oh = 0, ow = 0;
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

/// Enqueues y = chain(conv(x, w)) on `stream`: each result, summed in float, goes through `chain` (the
/// post-op epilogue over y: bias, activations, residuals; n_instr = 0 for none) before it is stored once.
/// 16-byte vectors of channels where c and the pointers allow, else one channel per thread.
void launch_depthwise_nhwc(const DepthwiseParams& p, const EpilogueParams& chain, Stream stream);

}  // namespace kiln::engine::cuda
