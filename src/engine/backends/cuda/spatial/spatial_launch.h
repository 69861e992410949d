#pragma once
// Launch functions of the spatial kernels (pooling.cu, resize.cu), shared by nvcc and g++ (launch.h
// says how).

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

// ---- Pooling (pooling.cu) ----

struct PoolParams {
  int kind = 0;  // 0 max, 1 average
  bool adaptive = false, count_include_pad = true;
  /// 0: planes are contiguous (NCHW). > 0: channels-last with this many channels (NHWC / NDHWC): `planes` is
  /// then the batch, each spatial position holds `channels` consecutive values, and threads run along them.
  int64_t channels = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, win[3] = {1, 1, 1}, stride[3] = {1, 1, 1},
          pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
};
/// Pooling over `planes` planes of 3-D (padded to 3) spatial extents (channels-last: `planes` images of
/// p.channels channels).
void launch_pool(const void* in, void* out, int dtype, int64_t planes, const PoolParams& p, Stream stream);

// ---- Resize (resize.cu) ----

/// Nearest (mode 0) or (bi/tri)linear (mode 1) resize of `planes` planes of 3-D (padded to 3) spatial
/// extents. scale[d] is the source-coordinate ratio per output step (as the CPU reference computes it on the
/// host); coordinates and weights are computed in double without contraction, as the reference does.
struct ResizeArgs {
  int mode = 0;
  bool align_corners = false;
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  double scale[3] = {1, 1, 1};
};
void launch_resize(const void* in, void* out, int dtype, const ResizeArgs& a, Stream stream);

}  // namespace kiln::engine::cuda
