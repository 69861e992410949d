#pragma once
// Launch functions of the spatial kernels (pooling.cu, resize.cu), shared by nvcc and g++ (launch.h
// says how).

#include <cstddef>
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

// Fast paths (pool_fast.cu) for fp32 / fp16 / bf16; each returns false, enqueuing nothing, where it does not
// apply.
/// Windowed (not adaptive) 2-D pooling of `images` channels-last images (p.channels > 0).
bool launch_pool2d_nhwc_fast(const void* in, void* out, int dtype, int64_t images, const PoolParams& p,
                             Stream stream);
/// The mean (or max, is_max) over all `spatial` elements of each image and channel: x is [images, channels,
/// spatial] (planar) or [images, spatial, channels] (channels_last), y is [images, channels]. A channels-last
/// pool splits the spatial range over blocks when `workspace` (workspace_bytes) has room for the partials.
bool launch_global_pool(const void* in, void* out, int dtype, int64_t images, int64_t spatial, int64_t channels,
                        bool channels_last, bool is_max, void* workspace, size_t workspace_bytes,
                        Stream stream);
/// The workspace a channels-last global pool of at most `images` x `channels` splits fully with.
size_t global_pool_workspace(int64_t images, int64_t channels);

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
