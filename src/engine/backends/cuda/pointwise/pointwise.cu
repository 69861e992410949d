// The generic pointwise kernel: evaluates a small program per output element (elementwise, activation,
// unary, cast, select and fused chains), interpreted; the formulas are in pointwise_ops.cuh. The fallback of
// the NVRTC-compiled tactic and of the conv / matmul post-op epilogue, so it stays reasonably fast:
// - 32-bit index math whenever the element count and every source offset fit (the 64-bit path otherwise);
// - a flat path when every source is the output's own elements, one value, or one contiguous run of dims (per
//   row / per channel: element (i / div) % len), with no per-dim index math at all;
// - sources loaded into registers up front and intermediate results kept in registers along a chain (only
//   results read again later than by the next instruction go to the temporaries array);
// - the program read in place from the parameter space (__grid_constant__: instructions and strides are
//   indexed at run time, which would otherwise copy the whole parameter block to local memory per thread).

#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/cuda/pointwise/pointwise_ops.cuh"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

// How the flat kernel indexes a source from the output index i.
enum : int { kIdxFull, kIdxScalar, kIdxRun };

/// Per source: the flat index pattern (mode; for kIdxRun element (i / div) % len).
template <typename I>
struct FlatIndex {
  int mode[kMaxPwSources];
  I div[kMaxPwSources];
  I len[kMaxPwSources];
};

template <typename T, typename I, bool kFlat>
__global__ void __launch_bounds__(kThreads)
    pointwise_kernel(const __grid_constant__ PwProgram p, const __grid_constant__ Shape shape,
                     const FlatIndex<I> fx, unsigned keep, void* out, int out_dtype, I n) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    // Every loop over sources is unrolled, so offsets and values stay in registers.
    I off[kMaxPwSources];
    if constexpr (kFlat) {
#pragma unroll
      for (int s = 0; s < kMaxPwSources; ++s) {
        if (fx.mode[s] == kIdxFull) {
          off[s] = i;
        } else if (fx.mode[s] == kIdxScalar) {
          off[s] = 0;
        } else {
          off[s] = (i / fx.div[s]) % fx.len[s];
        }
      }
    } else {
#pragma unroll
      for (int s = 0; s < kMaxPwSources; ++s) off[s] = 0;
      I rem = i;
      for (int k = shape.rank - 1; k >= 0; --k) {
        const I d = static_cast<I>(shape.d[k]);
        const I q = rem / d, idx = rem - q * d;
        rem = q;
#pragma unroll
        for (int s = 0; s < kMaxPwSources; ++s) {
          if (s < p.n_sources) off[s] += idx * static_cast<I>(p.src[s].st[k]);
        }
      }
    }
    T v[kMaxPwSources];
#pragma unroll
    for (int s = 0; s < kMaxPwSources; ++s) {
      v[s] = s < p.n_sources ? load_as<T>(p.src[s].data, p.src[s].dtype, static_cast<int64_t>(off[s])) : T(0);
    }
    T temps[kMaxPwInstrs];
    T result = T(0);
    for (int s = 0; s < p.n_instr; ++s) {
      const PwInstr& in = p.instr[s];
      // The previous instruction's result is `result`; older ones were kept in temps (see `keep`).
      auto operand = [&](int r) -> T {
        if (r >= kPwTemp) return r - kPwTemp == s - 1 ? result : temps[r - kPwTemp];
        T x = v[0];
#pragma unroll
        for (int q = 1; q < kMaxPwSources; ++q) x = r == q ? v[q] : x;
        return x;
      };
      T a = operand(in.a);
      switch (in.kind) {
        case kPwElementwise: result = pw::elementwise<T>(in.op, a, operand(in.b), p.integral); break;
        case kPwActivation: result = pw::activation<T>(in.op, a, T(in.alpha), T(in.beta)); break;
        case kPwUnary: result = pw::unary<T>(in.op, a); break;
        case kPwSelect: result = a != T(0) ? operand(in.b) : operand(in.c); break;
        case kPwScaleAdd: result = a + T(in.alpha) * operand(in.b); break;
        default: result = a; break;
      }
      if ((keep >> s) & 1u) temps[s] = result;
    }
    store_as<T>(out, out_dtype, static_cast<int64_t>(i), result);
  }
}

/// Bit s: the result of instruction s is read by an instruction other than the next one.
unsigned kept_results(const PwProgram& p) {
  unsigned keep = 0;
  for (int j = 0; j < p.n_instr; ++j) {
    for (int r : {p.instr[j].a, p.instr[j].b, p.instr[j].c}) {
      if (r >= kPwTemp && r - kPwTemp != j - 1) keep |= 1u << (r - kPwTemp);
    }
  }
  return keep;
}

/// The flat pattern of every source over `shape`, or false when one needs per-dim index math.
template <typename I>
bool flat_indexing(const PwProgram& p, const Shape& shape, int64_t n, FlatIndex<I>& fx) {
  for (int s = 0; s < kMaxPwSources; ++s) {
    fx.mode[s] = kIdxScalar;
    fx.div[s] = fx.len[s] = 1;
  }
  for (int s = 0; s < p.n_sources; ++s) {
    const int64_t* st = p.src[s].st;
    // From the innermost dim out: dims of size 1 do not matter; the strided dims must be one run of
    // row-major strides starting at 1.
    int last = -1;
    bool ended = false;
    int64_t len = 1;
    for (int k = shape.rank - 1; k >= 0; --k) {
      if (shape.d[k] == 1) continue;
      if (st[k] == 0) {
        ended = ended || last >= 0;
        continue;
      }
      if (ended || st[k] != len) return false;
      if (last < 0) last = k;
      len *= shape.d[k];
    }
    if (last < 0) continue;  // scalar
    int64_t div = 1;
    for (int k = last + 1; k < shape.rank; ++k) div *= shape.d[k];
    fx.mode[s] = div == 1 && len == n ? kIdxFull : kIdxRun;
    fx.div[s] = static_cast<I>(div);
    fx.len[s] = static_cast<I>(len);
  }
  return true;
}

/// Whether 32-bit index math covers `n` elements and every source offset.
bool fits_32bit(const PwProgram& p, const Shape& shape, int64_t n) {
  constexpr int64_t kMax = 0x7fffffff;
  if (n > kMax) return false;
  for (int s = 0; s < p.n_sources; ++s) {
    int64_t reach = 0;
    for (int k = 0; k < shape.rank; ++k) {
      if (p.src[s].st[k] < 0) return false;
      reach += (shape.d[k] - 1) * p.src[s].st[k];
      if (reach > kMax) return false;
    }
  }
  return true;
}

template <typename T, typename I>
void launch_as(const PwProgram& p, const Shape& shape, void* out, int out_dtype, int64_t n, Stream stream) {
  FlatIndex<I> fx;
  unsigned keep = kept_results(p);
  unsigned blocks = grid_for(n, kThreads);
  if (flat_indexing(p, shape, n, fx)) {
    pointwise_kernel<T, I, true>
        <<<blocks, kThreads, 0, stream>>>(p, shape, fx, keep, out, out_dtype, static_cast<I>(n));
  } else {
    pointwise_kernel<T, I, false>
        <<<blocks, kThreads, 0, stream>>>(p, shape, fx, keep, out, out_dtype, static_cast<I>(n));
  }
}

template <typename T>
void launch_typed(const PwProgram& p, const Shape& shape, void* out, int out_dtype, int64_t n,
                  Stream stream) {
  if (fits_32bit(p, shape, n)) {
    launch_as<T, uint32_t>(p, shape, out, out_dtype, n, stream);
  } else {
    launch_as<T, int64_t>(p, shape, out, out_dtype, n, stream);
  }
}

}  // namespace

void launch_pointwise(const PwProgram& program, const Shape& out_shape, void* out, int out_dtype,
                      bool use_double, Stream stream) {
  int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  if (use_double) {
    launch_typed<double>(program, out_shape, out, out_dtype, n, stream);
  } else {
    launch_typed<float>(program, out_shape, out, out_dtype, n, stream);
  }
}

}  // namespace kiln::engine::cuda
