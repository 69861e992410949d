#pragma once
// What the standalone cuDNN graph-API benchmarks share (cudnn_host_cost.cpp, cudnn_int8_probe.cu): a fatal check,
// backend descriptors, an NHWC tensor, a convolution and a pointwise operation. Header-only; each benchmark builds alone
// against the cuDNN of the GPU machine's Python environment (scripts/device/).

#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                            \
  do {                                                                                   \
    auto st_ = (x);                                                                      \
    if (st_ != 0) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, int(st_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

namespace cudnn_bench {

using Desc = cudnnBackendDescriptor_t;

inline Desc make(cudnnBackendDescriptorType_t type) {
  Desc d = nullptr;
  CK(cudnnBackendCreateDescriptor(type, &d));
  return d;
}

/// Sets an attribute; false when cuDNN refuses it.
inline bool set(Desc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n,
                const void* values) {
  return cudnnBackendSetAttribute(d, name, type, n, values) == CUDNN_STATUS_SUCCESS;
}

/// A finalized tensor of logical dims [n, c, h, w] stored NHWC (packed, 16-byte aligned); nullptr when cuDNN
/// refuses it.
inline Desc tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w, cudnnDataType_t dt, bool virt) {
  Desc t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  int64_t dims[4] = {n, c, h, w};
  int64_t strides[4] = {c * h * w, 1, w * c, c};
  int64_t align = 16;
  bool v = virt;
  const bool ok = set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt) &&
                  set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims) &&
                  set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides) &&
                  set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) &&
                  set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align) &&
                  set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v) &&
                  cudnnBackendFinalize(t) == CUDNN_STATUS_SUCCESS;
  return ok ? t : nullptr;
}

/// y = mode(x[, b]) in fp32, b scaled by `alpha2`; nullptr when cuDNN refuses it.
inline Desc pointwise_op(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc y, float alpha2 = 1.0f) {
  Desc pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
  if (cudnnBackendFinalize(pw) != CUDNN_STATUS_SUCCESS) return nullptr;
  Desc op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  if (b) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
  if (alpha2 != 1.0f) set(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &alpha2);
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  if (cudnnBackendFinalize(op) != CUDNN_STATUS_SUCCESS) return nullptr;
  return op;
}

/// The forward 2-D cross-correlation y = conv(x, w) (square stride and padding, no dilation) accumulating in
/// `compute`, as a finalized operation; nullptr when cuDNN refuses its descriptor or the operation.
inline Desc conv_forward_op(Desc x, Desc w, Desc y, cudnnDataType_t compute, int64_t stride, int64_t pad) {
  Desc conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  int64_t spatial = 2, one[2] = {1, 1}, strides[2] = {stride, stride}, pads[2] = {pad, pad};
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one);
  set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides);
  set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
  set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
  if (cudnnBackendFinalize(conv) != CUDNN_STATUS_SUCCESS) return nullptr;
  Desc op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  float alpha = 1.0f, beta = 0.0f;
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  if (cudnnBackendFinalize(op) != CUDNN_STATUS_SUCCESS) return nullptr;
  return op;
}

}  // namespace cudnn_bench
