// Vectorized fp32 pooling (max / average, padding, dilation, ceil mode, count_include_pad, adaptive) in every
// activation format. The tensor is viewed as [N, channel blocks, spatial, lanes]: plain NCHW has blocks of one
// channel (lanes 1), channels-last one block of all C channels, blocked8c/16c blocks of 8/16 (their padded lanes
// pool to what they hold: zeros stay zeros). Each output position pools its window lane-wise; the window bounds
// are the reference kernel's (src/engine/ops/spatial.cpp), and max propagates NaN as torch does. The output
// is written in the input's format, so the builder keeps a convolution's blocked or channels-last output as it is.

#include <algorithm>
#include <array>
#include <limits>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/ops/common.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::fast {
namespace {

/// [N, blocks, spatial, lanes] view of a rank 3-5 tensor stored in `format`.
struct BlockView {
  int64_t blocks = 0, lanes = 0, block_stride = 0, spatial_stride = 0, batch_stride = 0;
};

BlockView block_view(TensorFormat format, const Dims& dims) {
  int64_t c = dims[1], spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  BlockView v;
  switch (format) {
    case TensorFormat::E4M3:  // (never: kernel tables give rows that take any format no E4M3 tensor)
    case TensorFormat::Plain: v = {c, 1, spatial, 1, 0}; break;
    case TensorFormat::ChannelsLast: v = {1, c, 0, c, 0}; break;
    case TensorFormat::Blocked8c:
    case TensorFormat::Blocked16c: {
      int64_t lanes = format == TensorFormat::Blocked8c ? 8 : 16;
      v = {(c + lanes - 1) / lanes, lanes, spatial * lanes, lanes, 0};
      break;
    }
  }
  v.batch_stride = v.blocks * v.lanes * spatial;
  return v;
}

/// Trailing spatial dims padded to 3 with `fill` in front (the reference kernel's convention).
std::array<int64_t, 3> spatial3(const Dims& dims) {
  std::array<int64_t, 3> r{1, 1, 1};
  size_t ns = dims.size() - 2;
  for (size_t i = 0; i < ns; ++i) r[3 - ns + i] = dims[2 + i];
  return r;
}
std::array<int64_t, 3> param3(const std::vector<int64_t>& v, size_t ns, int64_t fill) {
  std::array<int64_t, 3> r{fill, fill, fill};
  for (size_t i = 0; i < ns && i < v.size(); ++i) r[3 - ns + i] = v[i];
  return r;
}

KILN_SIMD_CLONES
void max_into(float* acc, const float* x, int64_t lanes) {
  for (int64_t l = 0; l < lanes; ++l) acc[l] = (x[l] > acc[l] || x[l] != x[l]) ? x[l] : acc[l];
}

KILN_SIMD_CLONES
void add_into(float* acc, const float* x, int64_t lanes) {
  for (int64_t l = 0; l < lanes; ++l) acc[l] += x[l];
}

/// Max-pools the window positions (i1, i2), i1 in [lo1, hi1) by s1, i2 in [lo2, hi2) by s2, of a plane at `x`
/// stored with `lanes` values per position and `row` values per row, into acc lane-wise: one call per window
/// (resnet18's 3x3 max pool made one max_into call per position).
KILN_SIMD_CLONES
void max_window_into(float* acc, const float* x, int64_t lo1, int64_t hi1, int64_t s1, int64_t lo2,
                     int64_t hi2, int64_t s2, int64_t row, int64_t lanes) {
  for (int64_t i1 = lo1; i1 < hi1; i1 += s1) {
    for (int64_t i2 = lo2; i2 < hi2; i2 += s2) {
      const float* src = x + i1 * row + i2 * lanes;
      for (int64_t l = 0; l < lanes; ++l) acc[l] = (src[l] > acc[l] || src[l] != src[l]) ? src[l] : acc[l];
    }
  }
}

/// Sums `rows` consecutive rows of `lanes` values into acc lane-wise, in row order (the same sums as add_into
/// per row), W lanes at a time held in registers: a channels-last or blocked window row is one such run, and
/// a global average pool of 112 x 112 positions made one call per position. (Max pooling: max_window_into;
/// the NaN-propagating select over a register array measured 2-3x slower on resnet18's 3x3 windows.)
template <int W>
inline __attribute__((always_inline)) void add_rows_chunk(float* acc, const float* x, int64_t rows,
                                                          int64_t lanes) {
  float s[W];
  for (int j = 0; j < W; ++j) s[j] = acc[j];
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * lanes;
    for (int j = 0; j < W; ++j) s[j] += row[j];
  }
  for (int j = 0; j < W; ++j) acc[j] = s[j];
}

KILN_SIMD_CLONES
void add_rows_into(float* acc, const float* x, int64_t rows, int64_t lanes) {
  int64_t l = 0;
  for (; l + 16 <= lanes; l += 16) add_rows_chunk<16>(acc + l, x + l, rows, lanes);
  for (; l + 8 <= lanes; l += 8) add_rows_chunk<8>(acc + l, x + l, rows, lanes);
  for (; l < lanes; ++l) add_rows_chunk<1>(acc + l, x + l, rows, lanes);
}

class PoolingKernel : public Kernel {
 public:
  PoolingKernel(const LayerInfo& info) : p_(info.params<PoolingParams>()) {
    TensorFormat in = info.inputs[0].format, out = info.outputs[0].format;
    KILN_CHECK(in == out, Unsupported, "pooling '", info.layer->name, "': input format ", tensor_format_name(in),
               " and output format ", tensor_format_name(out), " differ");
  }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    size_t ns = x.dims.size() - 2;
    auto xs = spatial3(x.dims), ys = spatial3(y.dims);
    auto win = param3(p_.window, ns, 1), st = param3(p_.stride, ns, 1), pd = param3(p_.pre_padding, ns, 0),
         dl = param3(p_.dilation, ns, 1);
    BlockView xv = block_view(x.format, x.dims), yv = block_view(y.format, y.dims);
    int64_t ysp = ys[0] * ys[1] * ys[2];
    int64_t planes = x.dims[0] * xv.blocks, lanes = xv.lanes;
    const float* xd = x.as<float>();
    float* yd = y.as<float>();
    bool max = p_.kind == PoolingParams::Max;
    // Tasks of about 4096 values read: an item pools one window (a global pool's window is the whole plane,
    // so a grain in items alone kept efficientnet_b0's squeeze-excite pools of up to 144 x 56 x 56 on one
    // thread).
    int64_t window = 1;
    for (int d = 0; d < 3; ++d) window *= p_.adaptive ? (xs[d] + ys[d] - 1) / ys[d] + 1 : win[d];
    int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(lanes * window, 1));
    ops::parallel(args.pool, planes * ysp, grain, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        int64_t plane = item / ysp, o = item % ysp;
        int64_t n = plane / xv.blocks, block = plane % xv.blocks;
        const float* xb = xd + n * xv.batch_stride + block * xv.block_stride;
        float* acc = yd + n * yv.batch_stride + block * yv.block_stride + o * yv.spatial_stride;
        int64_t oc[3] = {o / (ys[1] * ys[2]), (o / ys[2]) % ys[1], o % ys[2]};
        int64_t lo[3], hi[3], step[3], pool_size = 1;
        for (int d = 0; d < 3; ++d) {
          if (p_.adaptive) {
            lo[d] = oc[d] * xs[d] / ys[d];
            hi[d] = ((oc[d] + 1) * xs[d] + ys[d] - 1) / ys[d];
            step[d] = 1;
          } else {
            int64_t s = oc[d] * st[d] - pd[d];
            int64_t e = std::min(s + (win[d] - 1) * dl[d] + 1, xs[d] + pd[d]);
            pool_size *= max ? 1 : e - s;
            lo[d] = s;
            hi[d] = std::min(e, xs[d]);
            step[d] = dl[d];
            while (lo[d] < 0) lo[d] += dl[d];
          }
        }
        std::fill(acc, acc + lanes, max ? -std::numeric_limits<float>::infinity() : 0.0f);
        int64_t count = 0;
        for (int64_t i0 = lo[0]; i0 < hi[0]; i0 += step[0]) {
          if (max && lanes > 1 && xv.spatial_stride == lanes) {
            max_window_into(acc, xb + i0 * xs[1] * xs[2] * lanes, lo[1], hi[1], step[1], lo[2], hi[2],
                            step[2], xs[2] * lanes, lanes);
            continue;
          }
          for (int64_t i1 = lo[1]; i1 < hi[1]; i1 += step[1]) {
            if (!max && step[2] == 1 && xv.spatial_stride == lanes && lanes > 1 && hi[2] > lo[2]) {
              // The window row's positions are one run of rows of `lanes` values; where the window spans
              // whole rows, its remaining rows too (a global pool: one run).
              int64_t rows = hi[2] - lo[2];
              const float* src = xb + ((i0 * xs[1] + i1) * xs[2] + lo[2]) * xv.spatial_stride;
              if (step[1] == 1 && rows == xs[2]) {
                rows *= hi[1] - i1;
                i1 = hi[1] - 1;
              }
              add_rows_into(acc, src, rows, lanes);
              count += rows;
              continue;
            }
            for (int64_t i2 = lo[2]; i2 < hi[2]; i2 += step[2]) {
              const float* src = xb + ((i0 * xs[1] + i1) * xs[2] + i2) * xv.spatial_stride;
              if (lanes == 1) *acc = max ? ((*src > *acc || *src != *src) ? *src : *acc) : *acc + *src;
              else if (max) max_into(acc, src, lanes);
              else add_into(acc, src, lanes);
              ++count;
            }
          }
        }
        if (!max) {
          int64_t div = (!p_.adaptive && p_.count_include_pad) ? pool_size : count;
          float scale = div > 0 ? 1.0f / static_cast<float>(div) : 0.0f;
          for (int64_t l = 0; l < lanes; ++l) acc[l] = div > 0 ? acc[l] * scale : 0.0f;
        }
      }
    });
  }

 private:
  PoolingParams p_;
};

bool applies(const LayerInfo& info, std::string* why) {
  size_t rank = info.inputs[0].max.size();
  if (info.inputs.size() != 1 || info.outputs.size() != 1) return refuse(why, "not one input and one output");
  if (!vec_dtype_ok(info.inputs[0].dtype, why) || !vec_dtype_ok(info.outputs[0].dtype, why)) return false;
  return (rank >= 3 && rank <= 5) || refuse(why, "rank " + std::to_string(rank) + " (vec takes 3 to 5)");
}

}  // namespace

void register_pooling(KernelTable& registry) {
  registry.add(KernelRow{
      .name = "vec",
      .kind = LayerKind::Pooling,
      .applies = applies,
      .create =
          [](const LayerInfo& info) {
            return std::unique_ptr<Kernel>(std::make_unique<PoolingKernel>(info));
          },
      // The input's format, read and written as it is (the builder asks once the producer's format is known).
      .formats =
          [](const LayerInfo& info) {
            TensorFormat f = info.inputs[0].format;
            return TacticFormats{{f}, {f}};
          },
      .any_format = true});
}

}  // namespace kiln::engine::cpu::fast
