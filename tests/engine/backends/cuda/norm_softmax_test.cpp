// The fast layer-norm and softmax paths of the cuda backend (norm_softmax.h, taken inside the "generic"
// tactic). Without a GPU: which path (warp / block / generic) and which vector width a row takes. With a GPU
// (EngineCuda.*, label gpu through kiln_engine_gpu_tests): the cuda kernel against the cpu backend's "ref"
// kernel on the same layer and the same input values, for fp32 / fp16 / bf16 and row lengths that reach every
// path (1 .. 1024 warp, 1025 .. 16384 block, 20000 generic), vector and element loads (lengths that are not a
// multiple of the vector, buffers one element past an aligned address), with and without scale / bias, many
// rows, and softmax rows with -inf entries and a fully masked row.
//
// Tolerance: |cuda - cpu| <= atol + rtol * |cpu|, NaN where the cpu has NaN, equal infinities.
//   fp32: rtol 1e-4, atol 1e-5, as the layer tests (check_layer): the cpu reference computes in double, the
//     kernels sum in fp32 (per-thread runs of at most 32 elements, then a tree), so the relative error of a
//     mean, variance or sum of exps stays near (32 + log2 n) * 2^-24, far below 1e-5 for n <= 20000.
//   fp16 / bf16: both backends read the very same half-precision values and compute at >= fp32 precision,
//   then
//     round once to the output type; the two unrounded values differ by ~1e-6 relative, so the stored results
//     differ by at most one unit in the last place: rtol 2^-10 (fp16) and 2^-7 (bf16), with atol 1e-5 for the
//     results near zero (fp32 noise of terms of order 1 that cancel, fp16 subnormals).

#if KILN_HAVE_CUDA

#include <cmath>
#include <limits>

#include "engine/backends/cuda/reduction/norm_softmax.h"
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;
using cuda::plan_rows;
using cuda::RowPath;

// ---- Without a GPU: the path a row takes ----

TEST(EngineCudaRowPaths, WarpPathUpTo1024Elements) {
  // Short rows: one vector per lane, 8 / 16 / 32 lanes per row.
  auto p = plan_rows(1, 4, true);
  EXPECT_EQ(p.path, RowPath::Warp);
  EXPECT_EQ(p.vec, 1);  // 1 is not a multiple of the vector
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.lanes, 8);
  p = plan_rows(7, 2, true);
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.lanes, 8);
  p = plan_rows(32, 4, true);  // 8 float4
  EXPECT_EQ(p.vec, 4);
  EXPECT_EQ(p.lanes, 8);
  p = plan_rows(64, 4, true);  // 16 float4
  EXPECT_EQ(p.lanes, 16);
  p = plan_rows(64, 2, true);  // 8 vectors of 8 halves
  EXPECT_EQ(p.vec, 8);
  EXPECT_EQ(p.lanes, 8);
  p = plan_rows(128, 4, true);  // 32 float4: still one per lane
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.lanes, 32);
  // Longer rows: 32 lanes, up to 32 elements per lane.
  p = plan_rows(768, 2, true);
  EXPECT_EQ(p.path, RowPath::Warp);
  EXPECT_EQ(p.vec, 8);
  EXPECT_EQ(p.items, 4);
  EXPECT_EQ(p.lanes, 32);
  p = plan_rows(768, 4, true);
  EXPECT_EQ(p.vec, 4);
  EXPECT_EQ(p.items, 8);
  p = plan_rows(1024, 2, true);
  EXPECT_EQ(p.path, RowPath::Warp);
  EXPECT_EQ(p.items, 4);
}

TEST(EngineCudaRowPaths, ElementLoadsForUnalignedRowsOrPointers) {
  auto p = plan_rows(768, 2, false);  // a pointer off 16 bytes
  EXPECT_EQ(p.path, RowPath::Warp);
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.items, 32);
  p = plan_rows(1001, 4, true);  // not a multiple of 4
  EXPECT_EQ(p.vec, 1);
  p = plan_rows(197, 2, true);  // ViT's sequence: not a multiple of 8
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.lanes, 32);
  p = plan_rows(1000, 2, true);  // 125 vectors of 8 halves
  EXPECT_EQ(p.vec, 8);
  p = plan_rows(1004, 2, true);  // a multiple of 4, not of 8: fp16 loads elements, fp32 float4
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(plan_rows(1004, 4, true).vec, 4);
}

TEST(EngineCudaRowPaths, BlockPathUpTo16384ElementsThenGeneric) {
  auto p = plan_rows(1025, 2, true);
  EXPECT_EQ(p.path, RowPath::Block);
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.items, 32);
  EXPECT_EQ(p.threads, 64);  // 33 threads of 32 elements, rounded up to warps
  p = plan_rows(4096, 2, true);
  EXPECT_EQ(p.path, RowPath::Block);
  EXPECT_EQ(p.vec, 8);
  EXPECT_EQ(p.threads, 128);
  p = plan_rows(4096, 4, true);
  EXPECT_EQ(p.vec, 4);
  EXPECT_EQ(p.threads, 128);
  p = plan_rows(16384, 4, false);
  EXPECT_EQ(p.path, RowPath::Block);
  EXPECT_EQ(p.threads, cuda::kRowBlockMaxThreads);
  EXPECT_EQ(plan_rows(16385, 4, true).path, RowPath::Generic);
  EXPECT_EQ(plan_rows(20000, 2, true).path, RowPath::Generic);
  EXPECT_EQ(plan_rows(0, 2, true).path, RowPath::Generic);
}

// ---- On the GPU: cuda against the cpu backend ----

/// A Normalization (layer norm over the last dim) or Softmax (last dim) layer over [rows, len] in `dt`, with
/// the LayerInfo a backend sees.
struct RowLayer {
  Layer layer;
  LayerInfo info;
  RowLayer(LayerKind kind, DType dt, int64_t rows, int64_t len) {
    layer.name = "row_layer_test";
    layer.kind = kind;
    layer.inputs = {0};
    layer.outputs = {1};
    Dims d = {rows, len};
    info.inputs.push_back({"in", dt, d, d, d});
    info.outputs.push_back({"out", dt, d, d, d});
    info.layer = &layer;
  }
  RowLayer(const RowLayer&) = delete;
};

/// Runs `tactic` of backend `name` on x; on the cuda backend every buffer starts `misalign` elements past an
/// aligned address (1: element loads).
HostTensor run_layer(const RowLayer& l, const std::string& name, const std::string& tactic,
                     const HostTensor& x, size_t misalign) {
  const Backend& b = *shared_backend(name);
  std::unique_ptr<Kernel> k = b.create_kernel(l.info, tactic);
  HostTensor out(x.dtype(), x.sizes());
  KernelArgs args;
  args.pool = b.thread_pool();
  args.input_values.push_back(nullptr);
  if (b.host_accessible()) {
    args.inputs.push_back(TensorView{const_cast<uint8_t*>(x.data()), x.dtype(), x.sizes()});
    args.outputs.push_back(TensorView{out.mutable_data(), out.dtype(), out.sizes()});
    k->execute(args);
    return out;
  }
  DeviceBuffers dev{&b, {}};
  size_t shift = misalign * dtype_size(x.dtype());
  auto* xp = static_cast<uint8_t*>(dev.add(x.nbytes() + shift)) + shift;
  auto* yp = static_cast<uint8_t*>(dev.add(out.nbytes() + shift)) + shift;
  b.copy(xp, x.data(), x.nbytes(), CopyKind::HostToDevice, nullptr);
  args.inputs.push_back(TensorView{xp, x.dtype(), x.sizes()});
  args.outputs.push_back(TensorView{yp, out.dtype(), out.sizes()});
  k->execute(args);
  b.copy(out.mutable_data(), yp, out.nbytes(), CopyKind::DeviceToHost, nullptr);
  b.synchronize(nullptr);
  return out;
}

/// The tolerance stated at the top of the file.
void expect_matches_cpu(const HostTensor& got, const HostTensor& cpu, const std::string& what) {
  DType dt = got.dtype();
  double rtol = dt == DType::Float32   ? 1e-4
                : dt == DType::Float16 ? std::ldexp(1.0, -10)
                                       : std::ldexp(1.0, -7);
  double atol = 1e-5;
  expect_close(got, values(cpu), rtol, atol, what);
}

const DType kDtypes[] = {DType::Float32, DType::Float16, DType::BFloat16};
/// Row lengths for every path: warp with 8 / 16 / 32 lanes and up to 32 elements per lane, block, generic;
/// multiples of the vectors and not (7, 197, 1001, 1025).
const int64_t kLens[] = {1, 7, 32, 64, 197, 768, 1000, 1001, 1024, 1025, 4096, 16384, 20000};

/// Rows for a length: enough that the last block of the warp path is partly empty (37 rows = 2 blocks of 16
/// eight-lane rows and 5), fewer for long rows.
int64_t rows_for(int64_t len) { return len <= 1024 ? 37 : len <= 4096 ? 9 : 3; }

std::string describe_case(const std::string& kind, DType dt, int64_t rows, int64_t len, size_t misalign) {
  return kind + " " + dtype_name(dt) + " [" + std::to_string(rows) + ", " + std::to_string(len) + "]" +
         (misalign ? " misaligned" : "");
}

/// Layer norm with the affine parameters `affine` says (0 none, 1 scale, 2 scale and bias, 3 bias), inputs
/// uniform in [lo, hi).
void check_layer_norm(DType dt, int64_t rows, int64_t len, int affine, size_t misalign, std::mt19937& rng,
                      double lo = -2, double hi = 2) {
  std::string what = describe_case("layer norm affine " + std::to_string(affine), dt, rows, len, misalign);
  SCOPED_TRACE(what);
  RowLayer l(LayerKind::Normalization, dt, rows, len);
  NormalizationParams p;
  p.kind = NormalizationParams::Layer;
  p.axis = 1;
  p.epsilon = 1e-5;
  l.layer.params = p;
  l.layer.weights.resize(2);
  if (affine == 1 || affine == 2)
    l.layer.weights[0] = Weights(random_tensor(DType::Float32, {len}, rng, 0.5, 1.5));
  if (affine >= 2) l.layer.weights[1] = Weights(random_tensor(DType::Float32, {len}, rng));
  HostTensor x = random_tensor(dt, {rows, len}, rng, lo, hi);
  HostTensor cpu = run_layer(l, "cpu", "ref", x, 0);
  HostTensor got = run_layer(l, "cuda", "generic", x, misalign);
  expect_matches_cpu(got, cpu, what);
}

TEST(EngineCuda, LayerNormFastPathsEqualCpu) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(901);
  for (DType dt : kDtypes) {
    for (int64_t len : kLens) {
      for (int affine : {0, 2}) check_layer_norm(dt, rows_for(len), len, affine, 0, rng);
    }
  }
}

TEST(EngineCuda, LayerNormScaleOnlyBiasOnlyAndOffsetInputs) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(902);
  for (DType dt : kDtypes) {
    for (int64_t len : {int64_t{64}, int64_t{768}, int64_t{4096}}) {
      check_layer_norm(dt, 11, len, 1, 0, rng);
      check_layer_norm(dt, 11, len, 3, 0, rng);
      // A mean far from zero against a small spread: the variance comes from x - mean (two passes over the
      // registers), never from E[x^2] - mean^2.
      check_layer_norm(dt, 11, len, 2, 0, rng, 3.0, 5.0);
    }
  }
}

TEST(EngineCuda, LayerNormMisalignedBuffersTakeElementLoads) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(903);
  for (DType dt : kDtypes) {
    for (int64_t len : {int64_t{64}, int64_t{768}, int64_t{1024}, int64_t{4096}}) {
      check_layer_norm(dt, 13, len, 2, 1, rng);
    }
  }
}

TEST(EngineCuda, LayerNormManyRows) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(904);
  for (DType dt : kDtypes) {
    check_layer_norm(dt, 30011, 96, 2, 0, rng);  // fp16/bf16: 12 vectors, 16-lane groups; fp32: 24, 32 lanes
    check_layer_norm(dt, 6304, 768, 2, 0, rng);  // ViT-B/16 at batch 32: 32 * 197 tokens of 768
  }
}

/// Softmax (or log-softmax) with inputs uniform in [-8, 8), a fraction `masked` of them -inf and, when
/// `masked_row` >= 0, that whole row -inf.
void check_softmax(DType dt, int64_t rows, int64_t len, bool log, size_t misalign, double masked,
                   int64_t masked_row, std::mt19937& rng) {
  std::string what = describe_case(log ? "log_softmax" : "softmax", dt, rows, len, misalign) +
                     (masked > 0 ? " masked" : "") + (masked_row >= 0 ? " with a fully masked row" : "");
  SCOPED_TRACE(what);
  RowLayer l(LayerKind::Softmax, dt, rows, len);
  SoftmaxParams p;
  p.axis = 1;
  p.log = log;
  l.layer.params = p;
  HostTensor x = random_tensor(dt, {rows, len}, rng, -8, 8);
  std::bernoulli_distribution mask(masked);
  const double ninf = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if ((masked > 0 && mask(rng)) || i / len == masked_row) x.set_from_double(i, ninf);
  }
  HostTensor cpu = run_layer(l, "cpu", "ref", x, 0);
  HostTensor got = run_layer(l, "cuda", "generic", x, misalign);
  expect_matches_cpu(got, cpu, what);
}

TEST(EngineCuda, SoftmaxFastPathsEqualCpu) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(911);
  for (DType dt : kDtypes) {
    for (int64_t len : kLens) {
      for (bool log : {false, true}) check_softmax(dt, rows_for(len), len, log, 0, 0, -1, rng);
    }
  }
}

TEST(EngineCuda, SoftmaxMaskedEntriesAndFullyMaskedRows) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(912);
  // A fully masked row is NaN on both backends (the max is -inf, and -inf - -inf is NaN); a partly masked
  // one gives 0 (softmax) or -inf (log-softmax) at the masked entries.
  for (DType dt : kDtypes) {
    for (int64_t len :
         {int64_t{7}, int64_t{128}, int64_t{197}, int64_t{1024}, int64_t{4096}, int64_t{20000}}) {
      for (bool log : {false, true}) check_softmax(dt, rows_for(len), len, log, 0, 0.3, 1, rng);
    }
  }
}

TEST(EngineCuda, SoftmaxMisalignedBuffersAndManyRows) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(913);
  for (DType dt : kDtypes) {
    for (int64_t len : {int64_t{64}, int64_t{768}, int64_t{4096}}) {
      for (bool log : {false, true}) check_softmax(dt, 13, len, log, 1, 0, -1, rng);
    }
    check_softmax(dt, 24576, 128, false, 0, 0.1, 5, rng);  // BERT-base at batch 32: 32 * 12 heads * 128 rows
    check_softmax(dt, 30011, 12, true, 0, 0, -1, rng);  // fp32: 3 float4, 8 lanes; fp16/bf16: 12 elements, 16
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
