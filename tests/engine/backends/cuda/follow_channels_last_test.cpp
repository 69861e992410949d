// Cuda kernels that follow a ChannelsLast input (engine/backends/follow_channels_last.h): the pointwise
// tactics ("nvrtc", "generic") and Reduce ("generic").
//
// Without a GPU (EngineCudaFollowChannelsLast.*): the formats each row asks for, and the NVRTC source of a
// channels-last layer specialized on its dims in storage order.
// With a GPU (EngineCuda.*, label gpu through kiln_engine_gpu_tests):
//   - a pointwise layer run on channels-last buffers gives exactly the bytes of the same layer run on Plain
//     buffers, reformatted (the same arithmetic per element, only the addressing differs);
//   - Reduce on a channels-last input (spatial means through the middle-run kernel, the innermost run through
//     the row kernels, other axes through the strided one) against the same reduction of the Plain input: arg
//     max exact, fp16 outputs the same bytes (every kernel sums in fp32 or double and rounds once), fp32
//     outputs to 1e-6 relative (sums in other orders, some in fp32);
//   - a squeeze-excite block between channels-last convolutions (fp16): reformats only at the bindings
//     without timing, and the outputs against the cpu backend (tolerance: nhwc_test.cpp's file comment).

#if KILN_HAVE_CUDA

#include <cmath>
#include <cstdio>

#include "engine/backends/cuda/conv_test_util.h"
#include "engine/backends/cuda/pointwise/nvrtc_source.h"
#include "engine/pointwise_programs.h"

namespace kiln::engine {
namespace {
using namespace testing;
using namespace cuda_conv_test;

/// x * w0[C, 1, 1] -> SiLU -> * in1 (a squeeze-excite scale [N, C, 1, 1]).
FusedPointwiseParams scale_silu_gate() {
  FusedPointwiseParams f;
  f.program.push_back(programs::instr(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Mul),
                                      {PointwiseInstr::kInput, PointwiseInstr::kWeight}));
  PointwiseInstr silu = programs::instr(LayerKind::Activation, 0, {PointwiseInstr::kTemp});
  silu.activation.kind = ActivationKind::Silu;
  f.program.push_back(silu);
  f.program.push_back(programs::instr(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Mul),
                                      {PointwiseInstr::kTemp + 1, PointwiseInstr::kInput + 1}));
  return f;
}

TEST(EngineCudaFollowChannelsLast, PointwiseRowsFollowAChannelsLastInput) {
  const Dims x = {2, 8, 5, 7};
  for (const char* tactic : {"nvrtc", "generic"}) {
    SCOPED_TRACE(tactic);
    const KernelRow* r = row(LayerKind::Elementwise, tactic);
    ASSERT_TRUE(r && r->formats);
    auto formats = [&](const std::vector<std::pair<Dims, TensorFormat>>& in) {
      TestLayer t(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Mul}, in, {x, kPlain},
                  DType::Float16);
      return r->formats(t.info);
    };
    // A squeeze-excite scale lies the same in both orders: read as it is.
    TacticFormats f = formats({{x, kCl}, {{2, 8, 1, 1}, kPlain}});
    EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{kCl, kPlain}));
    EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{kCl}));
    // Another input of the output's rank is read channels-last too.
    f = formats({{x, kCl}, {x, kPlain}});
    EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{kCl, kCl}));
    EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{kCl}));
    // A lower-rank input without channels ([H, W], padded [1, 1, H, W]) lies the same; one with them
    // ([C, H, W]) does not, and then the layer stays Plain, as it does without a channels-last input.
    f = formats({{x, kCl}, {{5, 7}, kPlain}});
    EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{kCl, kPlain}));
    f = formats({{x, kPlain}, {x, kPlain}});
    EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{kPlain}));
    f = formats({{x, kCl}, {{8, 5, 7}, kPlain}});
    EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{kPlain, kPlain}));
    EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{kPlain}));
  }
}

TEST(EngineCudaFollowChannelsLast, ReduceFollowsAChannelsLastInput) {
  const KernelRow* r = row(LayerKind::Reduce, "generic");
  ASSERT_TRUE(r && r->formats);
  auto formats = [&](const std::vector<int64_t>& axes, bool keep, const Dims& y, TensorFormat in) {
    ReduceParams p{ReduceOp::Mean, axes, keep};
    TestLayer t(LayerKind::Reduce, p, {{{2, 8, 5, 7}, in}}, {y, kPlain}, DType::Float16);
    return r->formats(t.info);
  };
  TacticFormats f = formats({2, 3}, true, {2, 8, 1, 1}, kCl);  // a spatial mean kept as [N, C, 1, 1]
  EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{kCl}));
  EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{kCl}));
  f = formats({3}, true, {2, 8, 5, 1}, kCl);  // the output lies differently in ChannelsLast: Plain
  EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{kCl}));
  EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{kPlain}));
  f = formats({2, 3}, false, {2, 8}, kCl);
  EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{kPlain}));
  f = formats({2, 3}, true, {2, 8, 1, 1}, kPlain);
  EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{kPlain}));
}

TEST(EngineCudaFollowChannelsLast, NvrtcSourceOfAChannelsLastLayerUsesStorageOrder) {
  TestLayer t(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Mul},
              {{{2, 8, 5, 7}, kCl}, {{2, 8, 1, 1}, kPlain}}, {{2, 8, 5, 7}, kCl}, DType::Float16);
  cuda::NvrtcPwSpec s = cuda::nvrtc_pointwise_spec(t.info);
  EXPECT_EQ(s.static_out, (Dims{2, 5, 7, 8}));
  ASSERT_EQ(s.static_src.size(), 2u);
  EXPECT_EQ(s.static_src[0], (Dims{2, 5, 7, 8}));
  EXPECT_EQ(s.static_src[1], (Dims{2, 1, 1, 8}));
  ASSERT_TRUE(s.fast);
  EXPECT_EQ(s.fast_index[0].mode, cuda::PwIndexMode::Full);
  EXPECT_EQ(s.fast_index[1].mode, cuda::PwIndexMode::OuterInner);
  // The same layer in Plain is another kernel (another source).
  TestLayer p(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Mul},
              {{{2, 8, 5, 7}, kPlain}, {{2, 8, 1, 1}, kPlain}}, {{2, 8, 5, 7}, kPlain}, DType::Float16);
  EXPECT_NE(cuda::nvrtc_pointwise_source(cuda::nvrtc_pointwise_spec(p.info)),
            cuda::nvrtc_pointwise_source(s));
}

// ---- With a GPU ----

/// Runs `t` (a test layer whose formats say how each tensor lies) on logical inputs `in`: each stored in its
/// format, the output read back into logical order.
HostTensor run_logical(const TestLayer& t, const std::string& tactic, const std::vector<HostTensor>& in) {
  auto k = shared_backend("cuda")->create_kernel(t.info, tactic);
  std::vector<TensorView> views;
  std::vector<HostTensor> stored;
  for (size_t i = 0; i < in.size(); ++i) {
    const TensorInfo& ti = t.info.inputs[i];
    views.push_back(TensorView{nullptr, ti.dtype, ti.opt, ti.format});
    stored.push_back(to_format(in[i], ti.format));
  }
  const TensorInfo& yi = t.info.outputs[0];
  return from_format(run_kernel(*k, views, stored, TensorView{nullptr, yi.dtype, yi.opt, yi.format}),
                     yi.format);
}

TEST(EngineCuda, PointwiseOnChannelsLastBuffersEqualsPlain) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(501);
  for (DType dt : {DType::Float32, DType::Float16}) {
    for (int64_t n : {1, 3}) {  // batch 1: the scale indexes as Inner; 3: as OuterInner
      const Dims x = {n, 24, 5, 7}, s = {n, 24, 1, 1};
      HostTensor a = random_tensor(dt, x, rng), b = random_tensor(dt, x, rng), se = random_tensor(dt, s, rng);
      HostTensor w = random_tensor(dt, {24, 1, 1}, rng);
      for (const char* tactic : {"nvrtc", "generic"}) {
        std::string what = std::string(tactic) + " " + dtype_name(dt) + " batch " + std::to_string(n);
        SCOPED_TRACE(what);
        auto layers = [&](TensorFormat f, TensorFormat scale_format) {
          std::vector<std::unique_ptr<TestLayer>> v;
          v.push_back(std::make_unique<TestLayer>(
              LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Mul},
              std::vector<std::pair<Dims, TensorFormat>>{{x, f}, {s, scale_format}}, std::make_pair(x, f),
              dt));
          v.push_back(std::make_unique<TestLayer>(
              LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Add},
              std::vector<std::pair<Dims, TensorFormat>>{{x, f}, {x, f}}, std::make_pair(x, f), dt));
          v.push_back(std::make_unique<TestLayer>(
              LayerKind::FusedPointwise, scale_silu_gate(),
              std::vector<std::pair<Dims, TensorFormat>>{{x, f}, {s, scale_format}}, std::make_pair(x, f),
              dt));
          v.back()->layer.weights.push_back(Weights("w", w));
          return v;
        };
        auto plain = layers(kPlain, kPlain), cl = layers(kCl, kPlain), cl_scale = layers(kCl, kCl);
        const std::vector<std::vector<HostTensor>> inputs = {{a, se}, {a, b}, {a, se}};
        for (size_t i = 0; i < inputs.size(); ++i) {
          HostTensor want = run_logical(*plain[i], tactic, inputs[i]);
          EXPECT_TRUE(same_bytes(run_logical(*cl[i], tactic, inputs[i]), want)) << "layer " << i;
          EXPECT_TRUE(same_bytes(run_logical(*cl_scale[i], tactic, inputs[i]), want))
              << "layer " << i << " (scale CL)";
        }
      }
    }
  }
}

TEST(EngineCuda, ReduceOnAChannelsLastInputEqualsPlain) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(502);
  const Dims x = {3, 40, 6, 9};
  struct Case {
    ReduceOp op;
    std::vector<int64_t> axes;
    Dims y;
  };
  // Kernels: the middle-run kernel (spatial axes of the channels-last input), the row kernels (the innermost
  // run: axis 3 plain, axis 1 channels-last; fp32 sums) or the strided kernel (in double).
  const std::vector<Case> cases = {
      {ReduceOp::Mean, {2, 3}, {3, 40, 1, 1}}, {ReduceOp::Sum, {2, 3}, {3, 40, 1, 1}},
      {ReduceOp::Max, {2, 3}, {3, 40, 1, 1}},  {ReduceOp::Mean, {3}, {3, 40, 6, 1}},
      {ReduceOp::Sum, {1}, {3, 1, 6, 9}},      {ReduceOp::ArgMax, {2}, {3, 40, 9}}};
  for (DType dt : {DType::Float32, DType::Float16}) {
    HostTensor in = random_tensor(dt, x, rng);
    in.set_from_double(17, std::nan(""));  // NaN propagates through max and mean alike
    for (const Case& c : cases) {
      std::string what =
          std::string(reduce_op_name(c.op)) + " axes " + std::to_string(c.axes[0]) + " " + dtype_name(dt);
      SCOPED_TRACE(what);
      const bool keep = c.y.size() == x.size();
      const DType ydt = c.op == ReduceOp::ArgMax ? DType::Int64 : dt;
      auto layer = [&](TensorFormat in_format, TensorFormat out_format) {
        auto t = std::make_unique<TestLayer>(LayerKind::Reduce, ReduceParams{c.op, c.axes, keep},
                                             std::vector<std::pair<Dims, TensorFormat>>{{x, in_format}},
                                             std::make_pair(c.y, out_format), dt);
        t->info.outputs[0].dtype = ydt;
        return t;
      };
      HostTensor want = run_logical(*layer(kPlain, kPlain), "generic", {in});
      const TacticFormats f = row(LayerKind::Reduce, "generic")->formats(layer(kCl, kPlain)->info);
      HostTensor got = run_logical(*layer(kCl, f.outputs[0]), "generic", {in});
      if (c.op == ReduceOp::ArgMax || dt == DType::Float16) {
        // fp16: both sum in fp32 or double and round once, to the same fp16 (sums of at most 54 values, far
        // from a tie).
        EXPECT_TRUE(same_bytes(got, want));
      } else {  // fp32: sums in fp32 against sums in double (1e-6: a few fp32 roundings of values of size
                // ~10)
        expect_close(got, values(want), 1e-6, 1e-6, what);
      }
    }
  }
}

TEST(EngineCuda, SqueezeExciteBetweenChannelsLastConvolutionsHasNoReformats) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_graph")) GTEST_SKIP() << "built without cuDNN";
  std::mt19937 rng(503);
  const int64_t c = 32, se = 8;
  HostTensor k1 = random_tensor(DType::Float32, {c, 8, 3, 3}, rng, -0.3, 0.3),
             b1 = random_tensor(DType::Float32, {c}, rng);
  HostTensor k2 = random_tensor(DType::Float32, {se, c, 1, 1}, rng, -0.3, 0.3),
             b2 = random_tensor(DType::Float32, {se}, rng);
  HostTensor k3 = random_tensor(DType::Float32, {c, se, 1, 1}, rng, -0.3, 0.3),
             b3 = random_tensor(DType::Float32, {c}, rng);
  HostTensor k4 = random_tensor(DType::Float32, {16, c, 1, 1}, rng, -0.3, 0.3),
             b4 = random_tensor(DType::Float32, {16}, rng);
  auto make = [&](Network& net) {
    Tensor* x = net.add_input("x", DType::Float32, {2, 8, 12, 10});
    Tensor* y = net.add_convolution("conv1", x, Weights("w1", k1), Weights("b1", b1), pad1());
    y = net.add_activation("silu1", y, ActivationKind::Silu);
    // torchvision's SqueezeExcitation: adaptive_avg_pool2d(1) (a spatial mean), fc1, SiLU, fc2, sigmoid,
    // scale.
    Tensor* s = net.add_reduce("pool", y, ReduceOp::Mean, {2, 3}, true);
    s = net.add_convolution("fc1", s, Weights("w2", k2), Weights("b2", b2), ConvolutionParams{});
    s = net.add_activation("silu2", s, ActivationKind::Silu);
    s = net.add_convolution("fc2", s, Weights("w3", k3), Weights("b3", b3), ConvolutionParams{});
    s = net.add_activation("gate", s, ActivationKind::Sigmoid);
    y = net.add_elementwise("scale", y, s, ElementwiseOp::Mul);
    y = net.add_convolution("project", y, Weights("w4", k4), Weights("b4", b4), ConvolutionParams{});
    y->set_name("y");
    net.mark_output(y);
  };
  HostTensor x = random_tensor(DType::Float32, {2, 8, 12, 10}, rng);
  Network cpu_net;
  make(cpu_net);
  HostTensor want = run(build(cpu_net, config_for("cpu", DType::Float32, false)), {{"x", x}})[0];
  for (bool timed : {false, true}) {
    SCOPED_TRACE(timed ? "timed" : "untimed");
    Network net;
    make(net);
    auto plan = build(net, config_for("cuda", DType::Float16, timed));
    auto layers = plan->layers();
    std::printf("squeeze-excite plan (%s):%s\n", timed ? "timed" : "untimed", describe(layers).c_str());
    if (!timed) {
      // A reformat after the input (and its cast) and one before the output; every layer between them reads
      // and writes channels-last (the [N, C, 1, 1] tensors lie the same in both orders).
      int reformats = 0;
      for (const auto& l : layers) {
        reformats += l.kind == LayerKind::Reformat;
        if (l.kind == LayerKind::Reduce || l.kind == LayerKind::Activation ||
            l.kind == LayerKind::Elementwise || l.kind == LayerKind::FusedPointwise) {
          EXPECT_EQ(l.input_formats[0], kCl) << l.name;
        }
      }
      EXPECT_EQ(reformats, 2) << describe(layers);
    }
    expect_near_scaled(run(plan, {{"x", x}})[0], want, tolerance(DType::Float16),
                       timed ? "timed" : "untimed");
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
