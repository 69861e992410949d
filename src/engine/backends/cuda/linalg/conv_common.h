#pragma once
// What the cuda convolution tactics share: the cuDNN handle and error check, the KRSC weight order, and the
// rules of which layers they take (conv_applies for every cuDNN tactic, conv_applies_nhwc for the
// channels-last ones, which ask for all_channels_last formats).

#ifdef KILN_HAVE_CUDNN
#include <cudnn.h>

#include <string>

#include "engine/backends/cuda/cuda_util.h"

#define KILN_CUDNN_CHECK(expr)                                                   \
  do {                                                                           \
    cudnnStatus_t kiln_cudnn_st_ = (expr);                                       \
    KILN_CHECK(kiln_cudnn_st_ == CUDNN_STATUS_SUCCESS, Internal, "cuDNN error ", \
               cudnnGetErrorString(kiln_cudnn_st_), " (", #expr, ")");           \
  } while (0)

namespace kiln::engine::cuda {

/// One cuDNN handle per thread (cudnnSetStream changes a handle, so contexts on other threads need their
/// own).
cudnnHandle_t cudnn_handle();

/// Host weights [K, C/g, R, S] of any dtype reordered to [K, R, S, C/g] (cuDNN's NHWC filter layout).
HostTensor to_krsc(const HostTensor& w);

/// A convolution cuDNN can run: f32/f16/bf16, 1 to 3 spatial dims, symmetric padding, a post-op chain the
/// post-op pass takes.
bool conv_applies(const LayerInfo& layer, std::string* why);
/// conv_applies, and a forward 2-D convolution (4-D tensors): what the channels-last tactics take.
bool conv_applies_nhwc(const LayerInfo& layer, std::string* why);

}  // namespace kiln::engine::cuda

#endif
