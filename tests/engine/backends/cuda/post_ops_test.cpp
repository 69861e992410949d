// The post-op pass of the cuda convolution / matrix multiply kernels (post_ops.h). Without a GPU: which path
// the pass takes and its limits. With a GPU (EngineCuda.*, label gpu through kiln_engine_gpu_tests): the
// vectorized epilogue against the generic interpreter on the same chain (every activation, fp32 / fp16 /
// bf16, tails, channels spanning a vector, misaligned buffers), the generic path for a broadcast residual
// against a double reference, and a convolution plan whose post-ops run the same after serializing and
// loading it.

#if KILN_HAVE_CUDA

#include <cstdint>
#include <cstring>

#include "engine/backends/cuda/linalg/post_ops.h"
#include "engine/backends/cuda/pointwise/nvrtc_module.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;
using cuda::PostOpPass;

PostOp activation(ActivationKind kind, double alpha = 0, double beta = 0) {
  PostOp op;
  op.kind = PostOp::Activation;
  op.activation.kind = kind;
  op.activation.alpha = alpha;
  op.activation.beta = beta;
  return op;
}

PostOp sum(double scale = 1.0) {
  PostOp op;
  op.kind = PostOp::Sum;
  op.scale = scale;
  return op;
}

// ---- Without a GPU: the path and the limits ----

TEST(EngineCudaPostOps, EpilogueForResidualsOfTheOutputsDimsAndDtype) {
  // No device memory is touched: the pass only looks at the views.
  void* fake = reinterpret_cast<void*>(uintptr_t{0x10000});
  PostOpPass pass({activation(ActivationKind::Relu), sum()}, 0, fake, 1, 1, DType::Float16);
  EXPECT_FALSE(pass.empty());
  const Dims d = {2, 6, 7, 7};
  KernelArgs args;
  args.inputs = {TensorView{fake, DType::Float16, {2, 6, 9, 9}}, TensorView{fake, DType::Float16, d}};
  args.outputs = {TensorView{fake, DType::Float16, d}};
  EXPECT_TRUE(pass.uses_epilogue(args));
  args.inputs[1].dims = {1, 6, 7, 7};  // a broadcast residual
  EXPECT_FALSE(pass.uses_epilogue(args));
  args.inputs[1].dims = d;
  args.inputs[1].dtype = DType::Float32;  // another dtype
  EXPECT_FALSE(pass.uses_epilogue(args));
  args.inputs[1].dtype = DType::Float16;
  args.outputs[0].dims = args.inputs[1].dims = {4, 1024, 1024, 512};  // 2^31 elements: 64-bit indices
  EXPECT_FALSE(pass.uses_epilogue(args));

  // A matmul's pass: no bias, the residual after both operands; nothing left when cuBLASLt took every
  // post-op.
  PostOpPass mm({activation(ActivationKind::GeluErf), sum()}, 0, nullptr, 0, 2, DType::BFloat16);
  KernelArgs margs;
  margs.inputs = {TensorView{fake, DType::BFloat16, {3, 8}}, TensorView{fake, DType::BFloat16, {8, 5}},
                  TensorView{fake, DType::BFloat16, {3, 5}}};
  margs.outputs = {TensorView{fake, DType::BFloat16, {3, 5}}};
  EXPECT_TRUE(mm.uses_epilogue(margs));
  EXPECT_TRUE(PostOpPass({activation(ActivationKind::Relu)}, 1, nullptr, 0, 2, DType::Float32).empty());
}

TEST(EngineCudaPostOps, Limits) {
  std::string why;
  EXPECT_TRUE(PostOpPass::fits(31, true, 6, &why));
  EXPECT_FALSE(PostOpPass::fits(32, true, 0, &why));
  EXPECT_EQ(why, "too many post-ops");
  EXPECT_TRUE(PostOpPass::fits(32, false, 7, nullptr));
  EXPECT_FALSE(PostOpPass::fits(3, true, 7, nullptr));
  std::vector<PostOp> many(33, activation(ActivationKind::Relu));
  EXPECT_THROW(PostOpPass(many, 0, nullptr, 0, 1, DType::Float32), kiln::Error);
}

// ---- On the GPU ----

/// A device copy of `t` placed `offset` elements into its buffer (offset 1: not 16-byte aligned).
void* to_device(DeviceBuffers& dev, const HostTensor& t, size_t offset) {
  size_t es = dtype_size(t.dtype());
  auto* base = static_cast<uint8_t*>(dev.add(t.nbytes() + offset * es));
  dev.backend->copy(base + offset * es, t.data(), t.nbytes(), CopyKind::HostToDevice, nullptr);
  return base + offset * es;
}

HostTensor to_host(const Backend& b, const void* p, DType dt, const Dims& d) {
  HostTensor t(dt, d);
  b.copy(t.mutable_data(), p, t.nbytes(), CopyKind::DeviceToHost, nullptr);
  b.synchronize(nullptr);
  return t;
}

/// The distance of two stored floats of `bytes` (2 or 4) in units in the last place (NaNs of one kind: 0).
int64_t ulps_apart(const uint8_t* a, const uint8_t* b, size_t bytes) {
  auto ordered = [&](const uint8_t* p) -> int64_t {
    uint32_t u = 0;
    std::memcpy(&u, p, bytes);
    uint32_t sign = bytes == 2 ? 0x8000u : 0x80000000u;
    return u & sign ? -static_cast<int64_t>(u & ~sign) : static_cast<int64_t>(u);
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Both paths compute the same chain with the same formulas (pointwise_ops.cuh), compiled by nvcc with the
// same options, so they are expected to agree bit for bit; the 1-ulp allowance (in the stored type) only
// covers a different FMA contraction choice in the two kernels.
TEST(EngineCuda, PostOpEpilogueEqualsTheGenericInterpreter) {
  KILN_REQUIRE_GPU();
  const Backend& be = *shared_backend("cuda");
  std::mt19937 rng(621);
  const std::vector<Dims> shapes = {{2, 6, 7, 7}, {1, 16, 4, 4}, {3, 5, 3, 5}, {1, 3, 1, 1001}};
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (const Dims& d : shapes) {
      for (size_t offset : {size_t{0}, size_t{1}}) {  // 1: misaligned, the one-element kernel
        for (int k = 0; k <= static_cast<int>(ActivationKind::Mish); ++k) {
          auto kind = static_cast<ActivationKind>(k);
          double alpha = kind == ActivationKind::Clip          ? -0.5
                         : kind == ActivationKind::HardSigmoid ? 0.2
                                                               : 0.1;
          double beta = kind == ActivationKind::Clip ? 0.75 : kind == ActivationKind::Softplus ? 2.0 : 0.5;
          std::string what = std::string(dtype_name(dt)) + " " + activation_kind_name(kind) + " offset " +
                             std::to_string(offset) + " dims";
          for (int64_t x : d) what += " " + std::to_string(x);
          SCOPED_TRACE(what);
          DeviceBuffers dev{&be, {}};
          HostTensor y = random_tensor(dt, d, rng, -3, 3), bias = random_tensor(dt, {d[1]}, rng);
          HostTensor r0 = random_tensor(dt, d, rng, -2, 2), r1 = random_tensor(dt, d, rng, -2, 2);
          // bias, activation, + r0, leaky ReLU, + 0.5 r1
          PostOpPass pass(
              {activation(kind, alpha, beta), sum(), activation(ActivationKind::LeakyRelu, 0.2), sum(0.5)}, 0,
              to_device(dev, bias, 0), 1, 1, dt);
          KernelArgs args;
          args.inputs = {TensorView{nullptr, dt, d}, TensorView{to_device(dev, r0, offset), dt, d},
                         TensorView{to_device(dev, r1, offset), dt, d}};
          args.outputs = {TensorView{to_device(dev, y, offset), dt, d}};
          ASSERT_TRUE(pass.uses_epilogue(args));
          pass.run(args, "test epilogue");
          HostTensor fast = to_host(be, args.outputs[0].data, dt, d);
          args.outputs[0].data = to_device(dev, y, offset);
          pass.run_generic(args);
          HostTensor generic = to_host(be, args.outputs[0].data, dt, d);
          size_t es = dtype_size(dt);
          int bad = 0;
          std::string first;
          for (int64_t i = 0; i < y.numel(); ++i) {
            if (ulps_apart(fast.data() + i * es, generic.data() + i * es, es) <= 1) continue;
            if (++bad <= 5) {
              first += " [" + std::to_string(i) + "] epilogue " + std::to_string(fast.get_as_double(i)) +
                       " generic " + std::to_string(generic.get_as_double(i));
            }
          }
          EXPECT_EQ(bad, 0) << what << ":" << first;
        }
      }
    }
  }
}

// A residual that broadcasts is not what the builder fuses, but a layer may carry one: the generic path.
TEST(EngineCuda, PostOpPassBroadcastResidualTakesTheGenericPath) {
  KILN_REQUIRE_GPU();
  const Backend& be = *shared_backend("cuda");
  std::mt19937 rng(622);
  const Dims d = {2, 4, 3, 5}, rd = {1, 4, 3, 5};
  DeviceBuffers dev{&be, {}};
  HostTensor y = random_tensor(DType::Float32, d, rng), bias = random_tensor(DType::Float32, {4}, rng);
  HostTensor r = random_tensor(DType::Float32, rd, rng);
  PostOpPass pass({sum(), activation(ActivationKind::Relu)}, 0, to_device(dev, bias, 0), 1, 1,
                  DType::Float32);
  KernelArgs args;
  args.inputs = {TensorView{nullptr, DType::Float32, d},
                 TensorView{to_device(dev, r, 0), DType::Float32, rd}};
  args.outputs = {TensorView{to_device(dev, y, 0), DType::Float32, d}};
  EXPECT_FALSE(pass.uses_epilogue(args));
  pass.run(args, "test broadcast");
  HostTensor got = to_host(be, args.outputs[0].data, DType::Float32, d);
  std::vector<double> want(static_cast<size_t>(y.numel()));
  const int64_t per_image = 4 * 3 * 5;
  for (int64_t i = 0; i < y.numel(); ++i) {
    double v = y.get_as_double(i) + bias.get_as_double((i / 15) % 4) + r.get_as_double(i % per_image);
    want[i] = std::max(v, 0.0);
  }
  // fp32 sums of three values of order 1: a few float roundings.
  expect_close(got, want, 1e-6, 1e-6, "broadcast residual");
}

// conv + bias + ReLU + residual in fp16: one Convolution layer whose post-ops run in the epilogue; the plan
// runs bit for bit the same after serializing and loading it, and loading compiles nothing.
TEST(EngineCuda, ConvolutionPostOpsRunTheSameAfterLoadingAPlan) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(623);
  const int64_t n = 2, c = 8, h = 14, w = 14;  // 196 elements per channel: vectors span channels
  HostTensor k = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2);
  HostTensor b = random_tensor(DType::Float32, {c}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float16, {n, c, h, w});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv", x, Weights("k", k), Weights("b", b), p);
  y = net.add_activation("relu", y, ActivationKind::Relu);
  y = net.add_elementwise("res", y, x, ElementwiseOp::Add);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.backend = "cuda";
  config.precisions = {Precision::FP32, Precision::FP16};
  auto plan = build(net, config);
  int convs = 0, others = 0;
  for (const auto& l : plan->layers()) {
    convs += l.kind == LayerKind::Convolution;
    others += l.kind == LayerKind::Elementwise || l.kind == LayerKind::Activation;
  }
  EXPECT_EQ(convs, 1);
  EXPECT_EQ(others, 0) << "the bias, ReLU and residual were not fused into the convolution";

  HostTensor xin = random_tensor(DType::Float16, {n, c, h, w}, rng);
  std::map<std::string, HostTensor> feed = {{"x", xin}};
  auto want = run(plan, feed);
  // Against a double reference: fp16 tolerance as in check_layer.
  std::vector<double> ref;
  std::vector<double> xv = values(xin);
  const size_t image = static_cast<size_t>(c * h * w);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> xi(xv.begin() + i * image, xv.begin() + (i + 1) * image);
    std::vector<double> yi = conv3x3(xi, c, h, w, k, b);
    for (size_t j = 0; j < yi.size(); ++j) ref.push_back(std::max(yi[j], 0.0) + xi[j]);
  }
  expect_close(want[0], ref, 1e-2, 1e-2, "conv post-ops fp16");

  std::vector<uint8_t> bytes = plan->serialize();
  plan.reset();
  cuda::nvrtc_clear_module_cache();
  int64_t compiles = cuda::nvrtc_compile_count();
  auto loaded = Plan::deserialize(bytes);
  auto got = run(loaded, feed);
  EXPECT_EQ(cuda::nvrtc_compile_count(), compiles) << "loading the plan called NVRTC";
  ASSERT_EQ(got[0].nbytes(), want[0].nbytes());
  EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), want[0].nbytes()), 0);
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
