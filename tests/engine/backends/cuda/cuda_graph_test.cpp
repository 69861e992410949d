// CUDA graphs (ExecutionContext::set_cuda_graphs) and TF32 tactics (BuilderConfig::allow_tf32) on the cuda
// backend, and what the settings do on the cpu backend. The EngineCuda tests skip (saying why) where no GPU
// is available; they run in ctest kiln_engine_gpu_tests (label gpu).
//
// Tolerances: a replayed graph runs the very kernels, with the same parameters and buffers, that a plain
// execute of the same plan runs (cuBLASLt / cuDNN choose by deterministic heuristics), so replays are
// compared bit for bit. TF32 keeps 10 of fp32's 23 mantissa bits in the products (unit roundoff 2^-11
// ~ 4.9e-4) and accumulates in fp32: over K <= 288 products of values in [-1, 1] the error stays far below
// 1e-2 of the output's largest magnitude, the bound checked against the strict fp32 result.

#include <cstring>

#include "engine/engine_test_util.h"

#ifdef KILN_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace kiln::engine {
namespace {
using namespace testing;

#define KILN_REQUIRE_GPU_BACKEND()                                  \
  std::string why_no_gpu;                                   \
  const Backend* gpu = shared_backend("cuda", &why_no_gpu); \
  if (!gpu) GTEST_SKIP() << why_no_gpu

/// A small network with every kind of kernel the graph must hold: convolution (+ReLU), batched matrix
/// multiply against a weight, a reduction and a pointwise chain over a second input. x: [N, 4, 8, 8], z: [N,
/// 8, 8] with N in [1, 4]. Output "y" = sum_w(conv(x) @ W) * z + sigmoid(...), [N, 8, 8].
std::shared_ptr<Plan> build_mixed(const std::string& backend, std::mt19937& rng) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {-1, 4, 8, 8});
  Tensor* z = net.add_input("z", DType::Float32, {-1, 8, 8});
  ConvolutionParams cp;
  cp.pre_padding = cp.post_padding = {1, 1};
  Tensor* h = net.add_convolution("conv", x, random_tensor(DType::Float32, {8, 4, 3, 3}, rng),
                                  random_tensor(DType::Float32, {8}, rng), cp);
  h = net.add_activation("relu", h, ActivationKind::Relu);
  h = net.add_matrix_multiply("mm", h, false,
                              net.add_constant("w", random_tensor(DType::Float32, {8, 8}, rng)), false);
  Tensor* r = net.add_reduce("sum", h, ReduceOp::Sum, {3}, false);
  Tensor* p = net.add_elementwise("mul", r, z, ElementwiseOp::Mul);
  Tensor* s = net.add_activation("sig", r, ActivationKind::Sigmoid);
  Tensor* y = net.add_elementwise("add", p, s, ElementwiseOp::Add);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.backend = backend;
  OptimizationProfile prof;
  prof.set_dimensions("x", {1, 4, 8, 8}, {2, 4, 8, 8}, {4, 4, 8, 8});
  prof.set_dimensions("z", {1, 8, 8}, {2, 8, 8}, {4, 8, 8});
  config.profiles = {prof};
  return build(net, config);
}

/// Device buffers for the mixed network at batch n, and a context bound to them.
struct MixedRun {
  const Backend* dev;
  int64_t n;
  DeviceBuffers mem;
  void *x = nullptr, *z = nullptr, *y = nullptr;
  MixedRun(const Backend* device, int64_t batch) : dev(device), n(batch), mem{device, {}} {
    x = mem.add(static_cast<size_t>(n * 4 * 8 * 8) * 4);
    z = mem.add(static_cast<size_t>(n * 8 * 8) * 4);
    y = mem.add(static_cast<size_t>(n * 8 * 8) * 4);
  }
  void bind(ExecutionContext& ctx) const {
    ctx.set_input_shape("x", {n, 4, 8, 8});
    ctx.set_input_shape("z", {n, 8, 8});
    ctx.set_tensor_address("x", x);
    ctx.set_tensor_address("z", z);
    ctx.set_tensor_address("y", y);
  }
  void load(const HostTensor& hx, const HostTensor& hz) const {
    dev->copy(x, hx.data(), hx.nbytes(), CopyKind::HostToDevice, nullptr);
    dev->copy(z, hz.data(), hz.nbytes(), CopyKind::HostToDevice, nullptr);
    dev->synchronize(nullptr);
  }
  std::vector<float> result() const {
    std::vector<float> out(static_cast<size_t>(n * 8 * 8));
    dev->copy(out.data(), y, out.size() * 4, CopyKind::DeviceToHost, nullptr);
    dev->synchronize(nullptr);
    return out;
  }
};

/// Inputs of the mixed network at batch n.
std::pair<HostTensor, HostTensor> mixed_inputs(int64_t n, std::mt19937& rng) {
  return {random_tensor(DType::Float32, {n, 4, 8, 8}, rng), random_tensor(DType::Float32, {n, 8, 8}, rng)};
}

/// What a plain (graph-less) context computes for these inputs.
std::vector<float> plain_result(const std::shared_ptr<Plan>& plan, const Backend* dev,
                                const std::pair<HostTensor, HostTensor>& in) {
  MixedRun r(dev, in.first.sizes()[0]);
  r.load(in.first, in.second);
  ExecutionContext ctx(plan);
  r.bind(ctx);
  ctx.execute();
  return r.result();
}

void expect_bitwise(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
      << what << ": not bit-identical";
}

TEST(EngineCuda, GraphReplayMatchesPlainExecution) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(71);
  auto plan = build_mixed("cuda", rng);
  auto a = mixed_inputs(2, rng), b = mixed_inputs(2, rng);
  auto want_a = plain_result(plan, gpu, a), want_b = plain_result(plan, gpu, b);
  MixedRun r(gpu, 2);
  ExecutionContext ctx(plan);
  ctx.set_cuda_graphs(true);
  EXPECT_TRUE(ctx.cuda_graphs());
  r.bind(ctx);
  // The inputs' contents change between calls (same buffers): every replay must read them afresh.
  for (int call = 0; call < 6; ++call) {
    const auto& in = call % 2 ? b : a;
    r.load(in.first, in.second);
    ctx.execute();
    expect_bitwise(r.result(), call % 2 ? want_b : want_a, "call " + std::to_string(call));
  }
  auto st = ctx.graph_stats();
  EXPECT_FALSE(st.fallback);
  EXPECT_EQ(st.captures, 1u);
  EXPECT_EQ(st.replays, 5u);
}

#ifdef KILN_HAVE_CUDA
TEST(EngineCuda, GraphReplayOnAStreamOfTheCaller) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(72);
  auto plan = build_mixed("cuda", rng);
  auto a = mixed_inputs(3, rng);
  auto want = plain_result(plan, gpu, a);
  MixedRun r(gpu, 3);
  r.load(a.first, a.second);
  ExecutionContext ctx(plan);
  ctx.set_cuda_graphs(true);
  r.bind(ctx);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  for (int call = 0; call < 3; ++call) {
    ctx.execute(stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    expect_bitwise(r.result(), want, "call " + std::to_string(call));
  }
  cudaStreamDestroy(stream);
  EXPECT_EQ(ctx.graph_stats().captures, 1u);
  EXPECT_EQ(ctx.graph_stats().replays, 2u);
}
#endif

TEST(EngineCuda, GraphShapeChangeRecaptures) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(73);
  auto plan = build_mixed("cuda", rng);
  ExecutionContext ctx(plan);
  ctx.set_cuda_graphs(true);
  // One graph is kept (the last): 2, 3, then 2 again records three times; each second call replays.
  uint64_t expect_captures = 0, expect_replays = 0;
  for (int64_t n : {2, 3, 2, 4}) {
    auto in = mixed_inputs(n, rng);
    auto want = plain_result(plan, gpu, in);
    MixedRun r(gpu, n);
    r.load(in.first, in.second);
    r.bind(ctx);
    ctx.execute();
    ++expect_captures;
    expect_bitwise(r.result(), want, "batch " + std::to_string(n) + " recorded");
    ctx.execute();
    ++expect_replays;
    expect_bitwise(r.result(), want, "batch " + std::to_string(n) + " replayed");
    ctx.execute(nullptr);  // the default stream is fine too (the graph is recorded on a stream of its own)
    ++expect_replays;
    expect_bitwise(r.result(), want, "batch " + std::to_string(n) + " replayed again");
  }
  EXPECT_EQ(ctx.graph_stats().captures, expect_captures);
  EXPECT_EQ(ctx.graph_stats().replays, expect_replays);
  EXPECT_FALSE(ctx.graph_stats().fallback);
}

TEST(EngineCuda, GraphChangedAddressesStayCorrect) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(74);
  auto plan = build_mixed("cuda", rng);
  auto a = mixed_inputs(2, rng), b = mixed_inputs(2, rng);
  auto want_a = plain_result(plan, gpu, a), want_b = plain_result(plan, gpu, b);
  MixedRun ra(gpu, 2), rb(gpu, 2);
  ra.load(a.first, a.second);
  rb.load(b.first, b.second);
  ExecutionContext ctx(plan);
  ctx.set_cuda_graphs(true);
  ra.bind(ctx);
  ctx.execute();
  ctx.execute();
  expect_bitwise(ra.result(), want_a, "first buffers");
  // Other input and output buffers: the graph must not read or write the old ones.
  rb.bind(ctx);
  ctx.execute();
  expect_bitwise(rb.result(), want_b, "second buffers, recorded");
  ctx.execute();
  expect_bitwise(rb.result(), want_b, "second buffers, replayed");
  expect_bitwise(ra.result(), want_a, "first output buffer untouched");
  // Only the output moves back.
  ctx.set_tensor_address("y", ra.y);
  ctx.execute();
  ctx.execute();
  expect_bitwise(ra.result(), want_b, "output back in the first buffer");
  auto st = ctx.graph_stats();
  EXPECT_EQ(st.captures, 3u);
  EXPECT_EQ(st.replays, 3u);
  EXPECT_LE(st.updates, st.captures);
  EXPECT_FALSE(st.fallback);
}

TEST(EngineCuda, GraphsOffAgainRunsPlainly) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(75);
  auto plan = build_mixed("cuda", rng);
  auto a = mixed_inputs(1, rng);
  auto want = plain_result(plan, gpu, a);
  MixedRun r(gpu, 1);
  r.load(a.first, a.second);
  ExecutionContext ctx(plan);
  ctx.set_cuda_graphs(true);
  r.bind(ctx);
  ctx.execute();
  ctx.execute();
  ctx.set_cuda_graphs(false);
  ctx.execute();
  expect_bitwise(r.result(), want, "plain after graphs");
  EXPECT_EQ(ctx.graph_stats().captures, 1u);
  EXPECT_EQ(ctx.graph_stats().replays, 1u);
}

/// Device memory for a data-dependent output.
class DeviceOutputAllocator : public OutputAllocator {
 public:
  explicit DeviceOutputAllocator(const Backend* dev) : dev_(dev) {}
  ~DeviceOutputAllocator() override {
    if (data_) dev_->deallocate(data_);
  }
  void* reallocate_output(const std::string&, size_t bytes) override {
    if (bytes > bytes_) {
      if (data_) dev_->deallocate(data_);
      data_ = dev_->allocate(std::max<size_t>(bytes, 1));
      bytes_ = bytes;
    }
    return data_;
  }
  void notify_shape(const std::string&, const Dims& dims) override { dims_ = dims; }
  std::vector<int64_t> read() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    std::vector<int64_t> out(static_cast<size_t>(n));
    if (n) dev_->copy(out.data(), data_, out.size() * 8, CopyKind::DeviceToHost, nullptr);
    dev_->synchronize(nullptr);
    return out;
  }
  Dims dims_;

 private:
  const Backend* dev_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

TEST(EngineCuda, GraphsFallBackForNonZero) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(76);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {5, 4});
  Tensor* positive = net.add_elementwise(
      "gt", x, net.add_constant("zero", HostTensor::from_floats({0.0f}, {1})), ElementwiseOp::Greater);
  Tensor* nz = net.add_nonzero("nz", positive);
  nz->set_name("idx");
  net.mark_output(nz);
  BuilderConfig config;
  config.backend = "cuda";
  auto plan = build(net, config);
  HostTensor in = random_tensor(DType::Float32, {5, 4}, rng);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < in.numel(); ++i) {
    if (in.get_as_double(i) > 0) {
      want.push_back(i / 4);
      want.push_back(i % 4);
    }
  }
  DeviceBuffers mem{gpu, {}};
  void* xp = mem.add(in.nbytes());
  gpu->copy(xp, in.data(), in.nbytes(), CopyKind::HostToDevice, nullptr);
  DeviceOutputAllocator alloc(gpu);
  ExecutionContext ctx(plan);
  ctx.set_cuda_graphs(true);
  ctx.set_input_shape("x", {5, 4});
  ctx.set_tensor_address("x", xp);
  ctx.set_output_allocator("idx", &alloc);
  for (int call = 0; call < 3; ++call) {
    ctx.execute();
    EXPECT_EQ(alloc.dims_, (Dims{static_cast<int64_t>(want.size() / 2), 2})) << "call " << call;
    EXPECT_EQ(alloc.read(), want) << "call " << call;
  }
  auto st = ctx.graph_stats();
  EXPECT_TRUE(st.fallback);
  EXPECT_EQ(st.captures, 0u);
  EXPECT_EQ(st.replays, 0u);
}

/// max |got - want| / max |want|.
double max_rel_err(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want) {
  double err = 0, scale = 0;
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    err = std::max(err, std::fabs(got[0].get_as_double(i) - want[0].get_as_double(i)));
    scale = std::max(scale, std::fabs(want[0].get_as_double(i)));
  }
  return scale > 0 ? err / scale : err;
}

/// Builds `make` on cuda strictly and with TF32 allowed (first candidate wins: no timing), on cpu as the fp32
/// reference; checks tactics and tolerances; returns the TF32 plan's relative error against the strict one.
double check_tf32(const std::function<void(Network&)>& make, const std::map<std::string, HostTensor>& inputs,
                  LayerKind kind, const std::string& strict_tactic, const std::string& what) {
  Network n1, n2, n3;
  make(n1);
  make(n2);
  make(n3);
  BuilderConfig strict;
  strict.backend = "cuda";
  strict.timing_iterations = 0;
  BuilderConfig tf32 = strict;
  tf32.allow_tf32 = true;
  auto cpu = build(n1);
  auto p_strict = build(n2, strict);
  auto p_tf32 = build(n3, tf32);
  EXPECT_EQ(tactic_of(*p_strict, kind), strict_tactic) << what;
  EXPECT_EQ(tactic_of(*p_tf32, kind), strict_tactic + "_tf32") << what;
  auto want = run(cpu, inputs);
  auto got_strict = run(p_strict, inputs);
  auto got_tf32 = run(p_tf32, inputs);
  // TF32 off: unchanged, fp32 against the cpu backend as everywhere else (accumulation order differs).
  expect_close(got_strict[0], values(want[0]), 1e-4, 1e-4, what + " strict");
  double rel = max_rel_err(got_tf32, got_strict);
  EXPECT_LE(rel, 1e-2) << what;
  // The loaded plan keeps the TF32 tactic.
  auto loaded = Plan::deserialize(p_tf32->serialize());
  EXPECT_EQ(tactic_of(*loaded, kind), strict_tactic + "_tf32") << what;
  EXPECT_LE(max_rel_err(run(loaded, inputs), got_strict), 1e-2) << what << " (loaded)";
  return rel;
}

TEST(EngineCuda, Tf32MatrixMultiply) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(77);
  HostTensor w = random_tensor(DType::Float32, {256, 128}, rng);
  double rel = check_tf32(
      [&](Network& net) {
        Tensor* a = net.add_input("a", DType::Float32, {64, 256});
        net.mark_output(net.add_matrix_multiply("mm", a, false, net.add_constant("w", w), false));
      },
      {{"a", random_tensor(DType::Float32, {64, 256}, rng)}}, LayerKind::MatrixMultiply, "cublaslt",
      "matmul");
  // 256 products rounded to TF32 cannot all land on fp32's result: TF32 is really in effect.
  EXPECT_GT(rel, 0.0) << "the TF32 matmul equals the strict one bit for bit: FAST_TF32 not in effect?";
}

TEST(EngineCuda, Tf32Convolution) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(78);
  HostTensor w = random_tensor(DType::Float32, {32, 32, 3, 3}, rng);
  double rel = check_tf32(
      [&](Network& net) {
        Tensor* x = net.add_input("x", DType::Float32, {2, 32, 16, 16});
        ConvolutionParams p;
        p.pre_padding = p.post_padding = {1, 1};
        net.mark_output(net.add_convolution("conv", x, w, Weights(), p));
      },
      {{"x", random_tensor(DType::Float32, {2, 32, 16, 16}, rng)}}, LayerKind::Convolution, "cudnn_nhwc", "conv");
  // The first convolution tactics are the NHWC ones (cudnn_nhwc, cudnn_nhwc_tf32). cuDNN may pick an FMA
  // algorithm even with tensor-op math allowed, so no claim that TF32 was used.
  RecordProperty("tf32_conv_max_rel_err", std::to_string(rel));
}

TEST(EngineCuda, Tf32LeavesHalfPrecisionAlone) {
  KILN_REQUIRE_GPU_BACKEND();
  std::mt19937 rng(79);
  Network net;
  Tensor* a = net.add_input("a", DType::Float16, {16, 32});
  net.mark_output(net.add_matrix_multiply(
      "mm", a, false, net.add_constant("w", random_tensor(DType::Float16, {32, 8}, rng)), false));
  BuilderConfig config;
  config.backend = "cuda";
  config.strongly_typed = true;
  config.allow_tf32 = true;
  config.timing_iterations = 0;
  auto plan = build(net, config);
  EXPECT_EQ(tactic_of(*plan, LayerKind::MatrixMultiply), "cublaslt");
}

// ---- cpu: the settings are accepted and change nothing ----

TEST(EngineGraphs, CpuContextWithGraphsOnRunsPlainly) {
  std::mt19937 rng(80);
  auto plan = build_mixed("cpu", rng);
  auto in = mixed_inputs(3, rng);
  auto want = run(plan, {{"x", in.first}, {"z", in.second}});
  ExecutionContext ctx(plan);
  EXPECT_FALSE(ctx.cuda_graphs());
  ctx.set_cuda_graphs(true);
  ctx.set_input_shape("x", in.first.sizes());
  ctx.set_input_shape("z", in.second.sizes());
  ctx.set_tensor_address("x", const_cast<uint8_t*>(in.first.data()));
  ctx.set_tensor_address("z", const_cast<uint8_t*>(in.second.data()));
  for (int call = 0; call < 2; ++call) {
    HostTensor y(DType::Float32, {3, 8, 8});
    ctx.set_tensor_address("y", y.mutable_data());
    ctx.execute();
    EXPECT_EQ(std::memcmp(y.data(), want[0].data(), y.nbytes()), 0) << "call " << call;
  }
  auto st = ctx.graph_stats();
  EXPECT_TRUE(st.fallback);
  EXPECT_EQ(st.captures, 0u);
  EXPECT_EQ(st.replays, 0u);
}

TEST(EngineGraphs, AllowTf32ChangesNothingOnCpu) {
  std::mt19937 rng(81);
  HostTensor w = random_tensor(DType::Float32, {16, 8}, rng);
  auto make = [&](Network& net) {
    Tensor* a = net.add_input("a", DType::Float32, {4, 16});
    net.mark_output(net.add_matrix_multiply("mm", a, false, net.add_constant("w", w), false));
  };
  Network n1, n2;
  make(n1);
  make(n2);
  BuilderConfig tf32;
  tf32.allow_tf32 = true;
  auto strict = build(n1), relaxed = build(n2, tf32);
  ASSERT_EQ(strict->layers().size(), relaxed->layers().size());
  for (size_t i = 0; i < strict->layers().size(); ++i)
    EXPECT_EQ(strict->layers()[i].tactic, relaxed->layers()[i].tactic);
  std::map<std::string, HostTensor> in{{"a", random_tensor(DType::Float32, {4, 16}, rng)}};
  auto a = run(strict, in), b = run(relaxed, in);
  EXPECT_EQ(std::memcmp(a[0].data(), b[0].data(), a[0].nbytes()), 0);
}

}  // namespace
}  // namespace kiln::engine
