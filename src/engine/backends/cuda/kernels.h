#pragma once
// The CUDA backend's device kernels as plain launch functions over POD parameter structs. This header is
// shared by the .cu files (nvcc) and the host-side Kernel classes (.cpp, g++): it includes nothing of Kiln
// beyond fixed-width integers, so nvcc never parses the engine's headers.
//
// Element types are Kiln DType values as integers (DType::Float32 = 0, ... Bool = 9). Shapes have rank <= 8.
// Every launch enqueues on the given stream and returns at once; launch errors are reported by the caller
// through check_launch() (cuda_util.h).

#include <cstdint>

struct CUstream_st;

namespace kiln::engine::cuda {

using Stream = CUstream_st*;
constexpr int kMaxRank = 8;

enum DCode : int { kF32 = 0, kF16 = 1, kBF16 = 2, kF64 = 3, kI64 = 4, kI32 = 5, kI16 = 6, kI8 = 7, kU8 = 8, kBool = 9 };

/// A shape (iteration space) of rank <= kMaxRank.
struct Shape {
  int rank = 0;
  int64_t d[kMaxRank] = {};
};

// ---- Pointwise (pointwise.cu): a generic interpreter of small programs, one thread per output element. ----
// The real design compiles each chain with NVRTC at build time; this generic kernel is the first version.

enum PwKind : uint8_t { kPwElementwise, kPwActivation, kPwUnary, kPwCopy, kPwSelect, kPwScaleAdd };
constexpr int kMaxPwSources = 8, kMaxPwInstrs = 32, kPwTemp = 64;

/// A source (layer input or weight) read with per-dim element strides aligned to the output shape
/// (stride 0 on broadcast dims).
struct PwSource {
  const void* data = nullptr;
  int dtype = kF32;
  int64_t st[kMaxRank] = {};
};

/// One instruction; operands a, b, c name a source (< kPwTemp) or the result of instruction (x - kPwTemp).
/// Elementwise: op = ElementwiseOp; Activation: op = ActivationKind with alpha/beta; Unary: op = UnaryOp;
/// Copy: the value of a; Select: a != 0 ? b : c; ScaleAdd: a + alpha * b.
struct PwInstr {
  uint8_t kind = kPwCopy, op = 0;
  int16_t a = 0, b = 0, c = 0;
  float alpha = 0, beta = 0;
};

struct PwProgram {
  int n_sources = 0;
  PwSource src[kMaxPwSources];
  int n_instr = 0;
  PwInstr instr[kMaxPwInstrs];
  bool integral = false;  // elementwise ops use integer semantics (Div truncates, ...)
};

/// out[i] = program(sources at i) over `out_shape`, stored as `out_dtype`. Computes in double when
/// `use_double` (integer programs), else in float.
void launch_pointwise(const PwProgram& program, const Shape& out_shape, void* out, int out_dtype, bool use_double,
                      Stream stream);

// ---- Data movement (movement.cu; the strided copy in strided_copy.cu) ----

/// For every index of `shape`: out[out_base + sum idx*out_st] = in[in_base + sum idx*in_st] (element strides,
/// may be negative or 0), elements of `elem_size` bytes (1, 2, 4, 8).
void launch_strided_copy(const void* in, int64_t in_base, const int64_t* in_st, void* out, int64_t out_base,
                         const int64_t* out_st, const Shape& shape, int elem_size, Stream stream);

/// Padding: out (shape `out_shape`) from in (shape `in_shape`) with pre[k] elements before each dim;
/// mode 0 constant (value: `fill` bytes of one element), 1 reflect, 2 replicate, 3 circular.
void launch_pad(const void* in, const Shape& in_shape, void* out, const Shape& out_shape, const int64_t* pre, int mode,
                uint64_t fill, int elem_size, Stream stream);

/// Gather along an axis. Default mode: data viewed as [outer, axis_len, inner], out as [outer, n_idx, inner].
/// Elements mode: out has the index tensor's shape `idx_shape`; data's dims `data_shape`.
/// Negative indices wrap; an index still out of range gives 0 (no host check during execution).
void launch_gather(const void* data, const void* idx, int idx_dtype, void* out, int64_t outer, int64_t axis_len,
                   int64_t inner, int64_t n_idx, int elem_size, Stream stream);
void launch_gather_elements(const void* data, const Shape& data_shape, const void* idx, int idx_dtype,
                            const Shape& idx_shape, int axis, void* out, int elem_size, Stream stream);

// ---- Reductions (reduction.cu) ----

/// Reduce: for every output element (an index over `kept`, input strides kept_st), reduce over `red`
/// (input strides red_st). op = ReduceOp. Arg ops write Int64 indices along the (single) reduced dim.
void launch_reduce(const void* in, int in_dtype, const Shape& kept, const int64_t* kept_st, const Shape& red,
                   const int64_t* red_st, void* out, int out_dtype, int op, Stream stream);

/// Softmax over rows: input viewed as [outer, n, inner], one row per (outer, inner).
void launch_softmax(const void* in, void* out, int dtype, int64_t outer, int64_t n, int64_t inner, bool log,
                    Stream stream);

/// Normalization over rows of `row_len` contiguous elements; `rows` rows. The affine parameter index of element j
/// of row r: layer norm (groups == 0): j; group norm: (r % groups) * group_channels + j / spatial.
/// scale/bias are fp32 device arrays or null.
void launch_norm(const void* in, void* out, int dtype, int64_t rows, int64_t row_len, int64_t groups,
                 int64_t group_channels, int64_t spatial, const float* scale, const float* bias, float epsilon,
                 Stream stream);

// ---- Spatial (spatial.cu) ----

struct PoolParams {
  int kind = 0;  // 0 max, 1 average
  bool adaptive = false, count_include_pad = true;
  /// 0: planes are contiguous (NCHW). > 0: channels-last with this many channels (NHWC / NDHWC): `planes` is
  /// then the batch, each spatial position holds `channels` consecutive values, and threads run along them.
  int64_t channels = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, win[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0},
          dil[3] = {1, 1, 1};
};
/// Pooling over `planes` planes of 3-D (padded to 3) spatial extents (channels-last: `planes` images of
/// p.channels channels).
void launch_pool(const void* in, void* out, int dtype, int64_t planes, const PoolParams& p, Stream stream);

/// Where the rows of one attention operand lie: row r of flat batch index b starts at element
/// offset + (b / heads) * outer + (b % heads) * inner + r * row; the row's columns are contiguous. Dense
/// [batch, L, E]: heads 1, outer L * E, row E; strided views (AttentionView) give any of them.
struct AttnRows {
  int64_t heads = 1, outer = 0, inner = 0, row = 0, offset = 0;
#ifdef __CUDACC__
  __host__ __device__
#endif
  int64_t start(int64_t b) const { return offset + (b / heads) * outer + (b % heads) * inner; }
};
struct AttnParams {
  int64_t batch = 1, lq = 1, lk = 1, e = 1, ev = 1;
  AttnRows rows[4];  // q, k, v, out
  float scale = 1;
  bool causal = false;
  int mask_kind = 0;  // 0 none, 1 bool (true = keep), 2 additive float of dtype mask_dtype
  int mask_dtype = kF32;
  Shape batch_shape;             // the batch dims (product = batch)
  int64_t mask_st[kMaxRank + 2] = {};  // mask element strides over batch dims, then Lq, Lk (0 = broadcast)
};
/// softmax(q k^T * scale + mask) v; one block per query row; scores kept in shared memory (lk <= kMaxAttnKeys).
constexpr int64_t kMaxAttnKeys = 12288;
void launch_attention(const void* q, const void* k, const void* v, const void* mask, void* out, int dtype,
                      const AttnParams& p, Stream stream);

// ---- Scatter (scatter.cu) ----

/// torch.scatter / scatter_add along `axis` into `out`, which already holds the data (shape `out_shape`,
/// dtype `dtype`). Element e of the index tensor (shape `idx_shape`, also the updates' shape) targets the
/// output element at e's multi-index with the axis coordinate replaced by idx[e] (negative wraps; an index
/// still out of range is skipped: no host check during execution). reduction 0: the target becomes upd[e],
/// and of several e with one target the last in row-major order wins (as in the CPU reference's sequential
/// loop); `winners` is a workspace of numel(out_shape) uint64. reduction 1: out += upd[e] in double, rounded
/// to the dtype after each addition, in row-major order of e (one thread walks each index column along the
/// axis; `winners` is unused).
void launch_scatter(void* out, const Shape& out_shape, int dtype, const void* idx, int idx_dtype,
                    const Shape& idx_shape, const void* upd, int axis, int reduction,
                    unsigned long long* winners, Stream stream);

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

// ---- Fill (fill.cu) ----

/// out[i] for i < n: op 0 constant `start`; 1 arange start + i*delta; 2 linspace from start to `delta` (the
/// end) over n points. Computed in double and stored as the reference stores (integers saturate).
void launch_fill(void* out, int dtype, int64_t n, int op, double start, double delta, Stream stream);

// ---- TopK (topk.cu) ----

/// Top k along the middle dim of `in` viewed as [outer, n, inner]: values (same dtype, copied exactly) and
/// Int64 indices, each [outer, k, inner]. Order: by value (largest or smallest first), ties by lower index;
/// NaN counts as larger than every number (first when largest, last when smallest). n must be < 2^31.
void launch_topk(const void* in, int dtype, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest,
                 void* values, long long* indices, Stream stream);

// ---- Cumulative (cumulative.cu) ----

/// Cumulative sum/prod/max/min (op = CumulativeParams::Op) along the middle dim of [outer, n, inner],
/// optionally exclusive and/or reversed; accumulates in double and stores each output as the reference
/// stores.
void launch_cumulative(const void* in, void* out, int dtype, int64_t outer, int64_t n, int64_t inner, int op,
                       bool exclusive, bool reverse, Stream stream);

// ---- NonZero (nonzero.cu) ----

/// Blocks of the nonzero kernels; the workspace holds kNonZeroBlocks + 1 int64 counters.
constexpr int kNonZeroBlocks = 1024;
/// Writes the multi-indices of the non-zero elements of `in` (shape `shape`, row-major order) as Int64 rows
/// of rank entries into `out`, and enqueues a copy of their count into `*host_count`: valid only after the
/// caller synchronizes the stream.
void launch_nonzero(const void* in, int dtype, const Shape& shape, long long* out, long long* workspace,
                    long long* host_count, Stream stream);

}  // namespace kiln::engine::cuda
