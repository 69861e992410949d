// Strided copy (transpose, slice, concat, broadcast): the kernels behind launch_strided_copy. The host first
// plans the copy (strided_copy_plan.h: fewer dims, vector elements, 32-bit index math where it fits); then
// either one thread moves each (vector) element, or, for a transpose, blocks move 32x32 tiles through
// shared memory so that both the reads and the writes of a warp are contiguous. Bit-exact: bytes only move.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/movement/movement_dispatch.cuh"
#include "engine/backends/cuda/movement/movement_launch.h"
#include "engine/backends/cuda/movement/strided_copy_plan.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;
/// Rows of a tile each thread row of a tiled block handles in turn: a block is kCopyTile x kTileRows threads.
constexpr int kTileRows = 8;

/// Dims innermost first with their strides in the input and the output, in index kind N.
template <bool N>
struct CopyDims {
  using Offset = typename IndexKind<N>::Offset;
  int rank = 0;
  typename IndexKind<N>::Div div[kMaxRank];  // the dims' sizes (the outermost one is never divided by)
  Offset in_st[kMaxRank] = {}, out_st[kMaxRank] = {};
};

/// Adds the input and output offsets of linear index i (row-major over g's dims) to io and oo.
template <bool N>
__device__ __forceinline__ void add_offsets(typename IndexKind<N>::Linear i, const CopyDims<N>& g,
                                            typename IndexKind<N>::Offset& io,
                                            typename IndexKind<N>::Offset& oo) {
  using Offset = typename IndexKind<N>::Offset;
#pragma unroll
  for (int k = 0; k < kMaxRank; ++k) {
    if (k + 1 >= g.rank) {
      io += static_cast<Offset>(i) * g.in_st[k];
      oo += static_cast<Offset>(i) * g.out_st[k];
      return;
    }
    auto q = g.div[k].div(i);
    auto r = static_cast<Offset>(i - q * g.div[k].d);
    io += r * g.in_st[k];
    oo += r * g.out_st[k];
    i = q;
  }
}

template <typename E, bool N>
__global__ void __launch_bounds__(kThreads)
    strided_copy_kernel(const E* in, E* out, CopyDims<N> g, typename IndexKind<N>::Linear count) {
  using Linear = typename IndexKind<N>::Linear;
  using Offset = typename IndexKind<N>::Offset;
  Linear step = static_cast<Linear>(gridDim.x) * blockDim.x;
  for (Linear i = static_cast<Linear>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    Offset io = 0, oo = 0;
    add_offsets<N>(i, g, io, oo);
    out[oo] = in[io];
  }
}

/// A tiled copy: dim a is contiguous in the input, dim b in the output; `batch` holds the other dims.
template <bool N>
struct TileDims {
  using Offset = typename IndexKind<N>::Offset;
  typename IndexKind<N>::Linear tiles = 0;
  typename IndexKind<N>::Div tiles_a, tiles_b;  // tiles along a and along b
  Offset len_a = 0, len_b = 0, in_st_b = 0, out_st_a = 0;
  CopyDims<N> batch;
};

template <typename E, bool N>
__global__ void __launch_bounds__(kCopyTile* kTileRows)
    tiled_copy_kernel(const E* in, E* out, TileDims<N> g) {
  using Linear = typename IndexKind<N>::Linear;
  using Offset = typename IndexKind<N>::Offset;
  // One padding column: a warp reading a tile column then hits 32 different banks.
  __shared__ E tile[kCopyTile][kCopyTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (Linear t = blockIdx.x; t < g.tiles; t += gridDim.x) {
    Linear q = g.tiles_a.div(t), batch = g.tiles_b.div(q);
    Offset a0 = static_cast<Offset>(t - q * g.tiles_a.d) * kCopyTile;
    Offset b0 = static_cast<Offset>(q - batch * g.tiles_b.d) * kCopyTile;
    Offset io = 0, oo = 0;
    add_offsets<N>(batch, g.batch, io, oo);
    // Read rows along b, threads along a (contiguous in the input)...
    Offset a = a0 + tx;
#pragma unroll
    for (int r = 0; r < kCopyTile; r += kTileRows) {
      Offset b = b0 + ty + r;
      if (a < g.len_a && b < g.len_b) tile[ty + r][tx] = in[io + a + b * g.in_st_b];
    }
    __syncthreads();
    // ...write rows along a, threads along b (contiguous in the output).
    Offset b = b0 + tx;
#pragma unroll
    for (int r = 0; r < kCopyTile; r += kTileRows) {
      Offset a2 = a0 + ty + r;
      if (a2 < g.len_a && b < g.len_b) out[oo + b + a2 * g.out_st_a] = tile[tx][ty + r];
    }
    __syncthreads();
  }
}

/// The plan's dims except `skip_a` and `skip_b` (-1: none) as CopyDims.
template <bool N>
CopyDims<N> copy_dims(const CopyPlan& p, int skip_a = -1, int skip_b = -1) {
  using Offset = typename IndexKind<N>::Offset;
  CopyDims<N> g;
  for (int k = 0; k < p.rank; ++k) {
    if (k == skip_a || k == skip_b) continue;
    g.div[g.rank] = typename IndexKind<N>::Div(p.d[k]);
    g.in_st[g.rank] = static_cast<Offset>(p.in_st[k]);
    g.out_st[g.rank] = static_cast<Offset>(p.out_st[k]);
    ++g.rank;
  }
  return g;
}

template <typename E, bool N>
void launch_elementwise(const CopyPlan& p, const void* in, void* out, Stream stream) {
  strided_copy_kernel<E, N><<<grid_for(p.count, kThreads), kThreads, 0, stream>>>(
      static_cast<const E*>(in), static_cast<E*>(out), copy_dims<N>(p),
      static_cast<typename IndexKind<N>::Linear>(p.count));
}

template <typename E, bool N>
void launch_tiled(const CopyPlan& p, const void* in, void* out, Stream stream) {
  using Offset = typename IndexKind<N>::Offset;
  const int a = p.tile_dim;
  TileDims<N> g;
  int64_t tiles_a = (p.d[a] + kCopyTile - 1) / kCopyTile, tiles_b = (p.d[0] + kCopyTile - 1) / kCopyTile;
  int64_t batch = p.count / (p.d[a] * p.d[0]);
  g.tiles = static_cast<typename IndexKind<N>::Linear>(tiles_a * tiles_b * batch);
  g.tiles_a = typename IndexKind<N>::Div(tiles_a);
  g.tiles_b = typename IndexKind<N>::Div(tiles_b);
  g.len_a = static_cast<Offset>(p.d[a]);
  g.len_b = static_cast<Offset>(p.d[0]);
  g.in_st_b = static_cast<Offset>(p.in_st[0]);
  g.out_st_a = static_cast<Offset>(p.out_st[a]);
  g.batch = copy_dims<N>(p, 0, a);
  tiled_copy_kernel<E, N><<<grid_for(tiles_a * tiles_b * batch, 1), dim3(kCopyTile, kTileRows), 0, stream>>>(
      static_cast<const E*>(in), static_cast<E*>(out), g);
}

}  // namespace

void launch_strided_copy(const void* in, int64_t in_base, const int64_t* in_st, void* out, int64_t out_base,
                         const int64_t* out_st, const Shape& shape, int elem_size, Stream stream) {
  CopyPlan p = plan_strided_copy(reinterpret_cast<uintptr_t>(in), in_base, in_st,
                                 reinterpret_cast<uintptr_t>(out), out_base, out_st, shape, elem_size);
  if (p.path == CopyPath::kNone) return;
  const void* src = static_cast<const unsigned char*>(in) + p.in_offset;
  void* dst = static_cast<unsigned char*>(out) + p.out_offset;
  with_index_kind(p.narrow, [&](auto narrow) {
    constexpr bool N = decltype(narrow)::value;
    by_size(p.elem_size, [&](auto* tag) {
      using E = ElementOf<decltype(tag)>;
      if constexpr (sizeof(E) <= 8) {
        if (p.path == CopyPath::kTiled) return launch_tiled<E, N>(p, src, dst, stream);
      }
      launch_elementwise<E, N>(p, src, dst, stream);
    });
  });
}

}  // namespace kiln::engine::cuda
