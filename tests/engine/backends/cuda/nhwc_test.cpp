// Channels-last on the cuda backend: the NHWC convolution tactics ("cudnn_nhwc", "cudnn_nhwc_tf32"), the
// cuDNN algorithm tuned at build and stored in the plan (conv_plan_data.h), the fused conv + bias + residual
// + ReLU call, the channels-last post-op pass, channels-last pooling ("nhwc") and the Reformat kernel.
//
// Without a GPU (EngineCudaNhwc.*): the kernel table (order, applies, formats), the plan data format with
// hostile bytes, the format strides, the post-op pass's path choice for channels-last views.
// With a GPU (EngineCuda.*, label gpu through kiln_engine_gpu_tests):
//   - NHWC convolutions against the cpu backend (fp32 reference) for fp32 / fp16 / bf16: bias, ReLU,
//     residuals, chains the fused call takes and chains it does not, groups, depthwise, stride, dilation,
//     1x1; plans built without timing, so the tactic is cudnn_nhwc in fp32 and cudnn_graph (the graph API,
//     conv_graph_test.cpp) in fp16 / bf16 (checked).
//   - conv -> maxpool -> conv (+ residual) with reformats only at the bindings.
//   - the tuned algorithm: a kernel created with LayerInfo::tune records plan data, a kernel created from it
//     computes bit-identical outputs; corrupt or foreign data falls back to the heuristic.
//   - channels-last pooling == planar pooling bit for bit (same window order and float math; global pooling
//     as reductions in double, rounded once), and the Reformat kernel exactly (a permutation) at ranks 3-5
//     for several dtypes.
//   - the channels-last post-op pass: the epilogue and the generic interpreter against a double reference.
//
// Tolerances against the cpu backend's fp32 plan: max |cuda - cpu| <= tol * max |cpu| over each output.
// fp32: tol = 1e-4 (cuDNN runs FMA math only, without TF32; only the accumulation order differs: a few float
// ulps of partial sums of up to 144 products). fp16: 1e-2 (inputs and weights rounded to fp16, 2^-11
// relative each, with errors of random sign over the reduction; the convolution output rounded once before
// the post-op pass, the result once more). bf16: 2e-2 (the same roundings at 2^-8 each: about 4e-3 of a
// typical output, and the largest output is a few typical ones). Pooling, reformats and tuned-vs-stored
// kernels are compared exactly (same arithmetic on the same values).

#if KILN_HAVE_CUDA

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "engine/backends/cuda/conv_test_util.h"
#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/conv_plan_data.h"
#include "engine/backends/cuda/linalg/post_ops.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;
using cuda::ConvPlanData;
using namespace cuda_conv_test;

// ---- Without a GPU ----

TEST(EngineCudaNhwc, ConvolutionRowsNhwcFirst) {
  std::vector<std::string> want = {"depthwise_nhwc", "grouped_nhwc", "cudnn_int8", "cudnn_graph",
                                   "cudnn_nhwc_tf32", "cudnn_nhwc",   "cudnn_tf32", "cudnn"};
  std::vector<std::string> got = row_names(LayerKind::Convolution);
  if (!row(LayerKind::Convolution, "cudnn")) GTEST_SKIP() << "built without cuDNN";
  EXPECT_EQ(got, want);
  EXPECT_TRUE(row(LayerKind::Convolution, "cudnn_int8")->int8);
  EXPECT_FALSE(row(LayerKind::Convolution, "cudnn_graph")->int8);
  EXPECT_TRUE(row(LayerKind::Convolution, "cudnn_nhwc_tf32")->tf32);
  EXPECT_FALSE(row(LayerKind::Convolution, "cudnn_nhwc")->tf32);
  EXPECT_EQ(row_names(LayerKind::Pooling), (std::vector<std::string>{"nhwc", "generic"}));
  EXPECT_EQ(row_names(LayerKind::Reformat), (std::vector<std::string>{"generic", "quantize_e4m3"}));
}

TEST(EngineCudaNhwc, NhwcConvolutionAppliesWhereItRuns) {
  if (!row(LayerKind::Convolution, "cudnn_nhwc")) GTEST_SKIP() << "built without cuDNN";
  const auto& nhwc = *row(LayerKind::Convolution, "cudnn_nhwc");
  const auto& nhwc_tf32 = *row(LayerKind::Convolution, "cudnn_nhwc_tf32");
  std::string why;
  ConvolutionParams p = pad1();
  p.post_ops = {sum_op(), relu_op()};
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    auto t = conv_layer(dt, p, 1, TensorFormat::Plain, true);
    EXPECT_TRUE(nhwc.applies(t->info, &why)) << why;
    EXPECT_EQ(nhwc_tf32.applies(t->info, nullptr), dt == DType::Float32);
    // Every input (x and the residual) and the output channels-last.
    TacticFormats f = nhwc.formats_for(t->info);
    EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{TensorFormat::ChannelsLast, TensorFormat::ChannelsLast}));
    EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{TensorFormat::ChannelsLast}));
    // The NCHW rows stay Plain.
    EXPECT_TRUE(row(LayerKind::Convolution, "cudnn")->formats_for(t->info).inputs.empty());
  }
  ConvolutionParams tp = pad1();
  tp.transposed = true;
  auto t = conv_layer(DType::Float16, tp, 0, TensorFormat::Plain, false);
  EXPECT_FALSE(nhwc.applies(t->info, &why));
  EXPECT_NE(why.find("transposed"), std::string::npos) << why;
  auto one_d = conv_layer(DType::Float16, pad1(1), 0, TensorFormat::Plain, false, 3);
  EXPECT_FALSE(nhwc.applies(one_d->info, &why));
  EXPECT_NE(why.find("4-D"), std::string::npos) << why;
  EXPECT_TRUE(row(LayerKind::Convolution, "cudnn")->applies(one_d->info, nullptr));
  ConvolutionParams asym = pad1();
  asym.post_padding = {0, 0};
  auto a = conv_layer(DType::Float16, asym, 0, TensorFormat::Plain, false);
  EXPECT_FALSE(nhwc.applies(a->info, nullptr));
  auto i8 = conv_layer(DType::Int8, pad1(), 0, TensorFormat::Plain, false);
  EXPECT_FALSE(nhwc.applies(i8->info, nullptr));
}

// The INT8 row takes a convolution whose input has a range (floating or s8), its output floating or s8 with a
// range, and a post-op chain cuDNN's graph takes whole: [Sum]? [ReLU]?.
TEST(EngineCudaNhwc, Int8ConvolutionAppliesWhereItsGraphTakesTheWholeChain) {
  const KernelRow* int8 = row(LayerKind::Convolution, "cudnn_int8");
  if (!int8) GTEST_SKIP() << "built without cuDNN";
  std::string why;
  ConvolutionParams p = pad1();
  p.post_ops = {sum_op(), relu_op()};
  auto t = conv_layer(DType::Float16, p, 1, TensorFormat::Plain, true);
  EXPECT_FALSE(int8->applies(t->info, &why));
  EXPECT_NE(why.find("range"), std::string::npos) << why;
  t->info.inputs[0].range = DynamicRange{-2.0f, 3.0f};
  EXPECT_TRUE(int8->applies(t->info, &why)) << why;
  // s8 tensors need a range to be read by.
  t->info.inputs[1].dtype = t->info.outputs[0].dtype = DType::Int8;
  EXPECT_FALSE(int8->applies(t->info, nullptr));
  t->info.inputs[1].range = t->info.outputs[0].range = DynamicRange{0.0f, 4.0f};
  EXPECT_TRUE(int8->applies(t->info, &why)) << why;
  // cuDNN's INT8 engines keep no u8 tensors here (Backend::int8_unsigned).
  t->info.outputs[0].dtype = DType::UInt8;
  EXPECT_FALSE(int8->applies(t->info, nullptr));
  // A post-op the graph does not take: nothing would run it.
  ConvolutionParams sig = pad1();
  sig.post_ops = {relu_op(), relu_op()};
  auto s = conv_layer(DType::Float16, sig, 0, TensorFormat::Plain, true);
  s->info.inputs[0].range = DynamicRange{-1.0f, 1.0f};
  EXPECT_FALSE(int8->applies(s->info, &why));
  EXPECT_NE(why.find("[Sum]? [ReLU]?"), std::string::npos) << why;
  ConvolutionParams grouped = pad1();
  grouped.groups = 2;
  auto g = conv_layer(DType::Float16, grouped, 0, TensorFormat::Plain, false);
  g->info.inputs[0].range = DynamicRange{-1.0f, 1.0f};
  EXPECT_FALSE(int8->applies(g->info, &why));
  EXPECT_NE(why.find("grouped"), std::string::npos) << why;
  // An s8 output beside a floating residual (a block whose shortcut comes from a max pool) applies.
  ConvolutionParams res = pad1();
  res.post_ops = {sum_op(), relu_op()};
  auto m = conv_layer(DType::Float16, res, 1, TensorFormat::Plain, true);
  m->info.inputs[0].range = DynamicRange{-1.0f, 1.0f};
  m->info.outputs[0].dtype = DType::Int8;
  m->info.outputs[0].range = DynamicRange{0.0f, 2.0f};
  EXPECT_TRUE(int8->applies(m->info, &why)) << why;
  // A residual scale that is not positive would not commute with the ReLU it is applied after.
  m->layer.params = [&] {
    ConvolutionParams q = res;
    q.post_ops = {sum_op(-1.0), relu_op()};
    return q;
  }();
  EXPECT_FALSE(int8->applies(m->info, &why));
  EXPECT_NE(why.find("not positive"), std::string::npos) << why;
}

TEST(EngineCudaNhwc, PoolingAndReformatRows) {
  PoolingParams pp;
  pp.window = {3, 3};
  pp.stride = {2, 2};
  pp.pre_padding = pp.post_padding = {1, 1};
  pp.dilation = {1, 1};
  TestLayer pool(LayerKind::Pooling, pp, {{{2, 8, 9, 9}, TensorFormat::Plain}},
                 {{2, 8, 5, 5}, TensorFormat::Plain}, DType::Float16);
  const auto& nhwc = *row(LayerKind::Pooling, "nhwc");
  EXPECT_TRUE(nhwc.applies(pool.info, nullptr));
  TacticFormats f = nhwc.formats_for(pool.info);
  EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{TensorFormat::ChannelsLast}));
  EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{TensorFormat::ChannelsLast}));
  PoolingParams p1;
  p1.window = {3};
  p1.stride = {1};
  p1.pre_padding = p1.post_padding = {0};
  p1.dilation = {1};
  TestLayer pool1d(LayerKind::Pooling, p1, {{{2, 8, 9}, TensorFormat::Plain}},
                   {{2, 8, 7}, TensorFormat::Plain}, DType::Float16);
  EXPECT_FALSE(nhwc.applies(pool1d.info, nullptr));
  EXPECT_TRUE(row(LayerKind::Pooling, "generic")->applies(pool1d.info, nullptr));

  // A Reformat converts exactly as its params say; blocked formats are not cuda's.
  const auto& rf = *row(LayerKind::Reformat, "generic");
  for (int rank = 3; rank <= 5; ++rank) {
    Dims d(rank, 3);
    TestLayer r(LayerKind::Reformat, ReformatParams{TensorFormat::Plain, TensorFormat::ChannelsLast},
                {{d, TensorFormat::Plain}}, {d, TensorFormat::ChannelsLast}, DType::Int64);
    EXPECT_TRUE(rf.applies(r.info, nullptr)) << rank;
    f = rf.formats_for(r.info);
    EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{TensorFormat::Plain}));
    EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{TensorFormat::ChannelsLast}));
  }
  std::string why;
  TestLayer blocked(LayerKind::Reformat, ReformatParams{TensorFormat::Plain, TensorFormat::Blocked16c},
                    {{{1, 16, 4, 4}, TensorFormat::Plain}}, {{1, 16, 4, 4}, TensorFormat::Blocked16c},
                    DType::Float32);
  EXPECT_FALSE(rf.applies(blocked.info, &why));
  EXPECT_NE(why.find("channels_last"), std::string::npos) << why;
  TestLayer rank2(LayerKind::Reformat, ReformatParams{TensorFormat::Plain, TensorFormat::ChannelsLast},
                  {{{4, 4}, TensorFormat::Plain}}, {{4, 4}, TensorFormat::ChannelsLast}, DType::Float32);
  EXPECT_FALSE(rf.applies(rank2.info, nullptr));
}

TEST(EngineCudaNhwc, FormatStridesAgreeWithFormatOffset) {
  for (const Dims& d : {Dims{2, 3, 5}, Dims{2, 3, 4, 5}, Dims{2, 3, 4, 5, 6}}) {
    for (TensorFormat f : {TensorFormat::Plain, TensorFormat::ChannelsLast}) {
      std::vector<int64_t> st = cuda::format_strides(f, d);
      for (int64_t i = 0; i < cuda::numel(d); ++i) {
        std::vector<int64_t> idx = unravel(i, d);
        int64_t off = 0;
        for (size_t k = 0; k < d.size(); ++k) off += idx[k] * st[k];
        ASSERT_EQ(off, format_offset(f, d, idx))
            << tensor_format_name(f) << " rank " << d.size() << " at " << i;
      }
      // format_order lists the dims outermost first: strides decrease along it.
      std::vector<size_t> order = cuda::format_order(f, d.size());
      for (size_t k = 1; k < order.size(); ++k) EXPECT_GT(st[order[k - 1]], st[order[k]]);
    }
  }
}

TEST(EngineCudaNhwc, PlanDataRoundTripAndHostileBytes) {
  ConvPlanData d;
  d.dtype = static_cast<int64_t>(DType::Float16);
  d.layout = 1;
  d.tf32 = 0;
  d.algo = 1;
  d.math = 1;
  d.input = {8, 64, 56, 56};
  std::vector<uint8_t> b = cuda::encode_conv_plan_data(d);
  ConvPlanData back;
  std::string why;
  ASSERT_TRUE(cuda::decode_conv_plan_data(b, 8, 4, &back, &why)) << why;
  EXPECT_EQ(back, d);
  // Truncated, extended, wrong magic, wrong version, every single-byte corruption: never a crash, and a
  // corrupted blob either fails or decodes to valid ranges.
  for (size_t n : {size_t{0}, size_t{3}, size_t{8}, b.size() - 1}) {
    EXPECT_FALSE(
        cuda::decode_conv_plan_data(std::vector<uint8_t>(b.begin(), b.begin() + n), 8, 4, &back, &why))
        << n;
  }
  std::vector<uint8_t> longer = b;
  longer.push_back(0);
  EXPECT_FALSE(cuda::decode_conv_plan_data(longer, 8, 4, &back, &why));
  std::vector<uint8_t> v2 = b;
  v2[4] = 2;
  EXPECT_FALSE(cuda::decode_conv_plan_data(v2, 8, 4, &back, &why));
  EXPECT_NE(why.find("version 2"), std::string::npos) << why;
  for (size_t i = 0; i < b.size(); ++i) {
    std::vector<uint8_t> c = b;
    c[i] ^= 0x81;
    ConvPlanData x;
    if (cuda::decode_conv_plan_data(c, 8, 4, &x, &why)) {
      EXPECT_TRUE(x.algo >= 0 && x.algo < 8 && x.math >= 0 && x.math < 4 && x.input.size() >= 3 &&
                  x.input.size() <= 5)
          << i;
      for (int64_t v : x.input) EXPECT_GE(v, 0) << i;
    }
  }
  d.layout = 2;  // the graph API tactic
  ASSERT_TRUE(cuda::decode_conv_plan_data(cuda::encode_conv_plan_data(d), 8, 4, &back, &why)) << why;
  for (int64_t bad : {int64_t{-1}, int64_t{3}, INT64_MIN}) {
    d.layout = bad;
    EXPECT_FALSE(cuda::decode_conv_plan_data(cuda::encode_conv_plan_data(d), 8, 4, &back, &why)) << bad;
  }
  d.layout = 1;
  d.algo = 8;  // beyond the algorithms this cuDNN has
  EXPECT_FALSE(cuda::decode_conv_plan_data(cuda::encode_conv_plan_data(d), 8, 4, &back, &why));
  d.algo = 1;
  d.input = {1, 2};
  EXPECT_FALSE(cuda::decode_conv_plan_data(cuda::encode_conv_plan_data(d), 8, 4, &back, &why));
}

TEST(EngineCudaNhwc, ChannelsLastPostOpPassPath) {
  void* fake = reinterpret_cast<void*>(uintptr_t{0x10000});
  cuda::PostOpPass pass({sum_op(), relu_op()}, 0, fake, 1, 1, DType::Float16, true);
  const Dims d = {2, 6, 7, 7};
  KernelArgs args;
  args.inputs = {TensorView{fake, DType::Float16, d, TensorFormat::ChannelsLast},
                 TensorView{fake, DType::Float16, d, TensorFormat::ChannelsLast}};
  args.outputs = {TensorView{fake, DType::Float16, d, TensorFormat::ChannelsLast}};
  EXPECT_TRUE(pass.uses_epilogue(args));
  args.inputs[1].format = TensorFormat::Plain;  // a residual in another format: not element for element
  EXPECT_FALSE(pass.uses_epilogue(args));
  // Channels-last means the channel dim is 1.
  EXPECT_THROW(cuda::PostOpPass({relu_op()}, 0, fake, 0, 1, DType::Float16, true), kiln::Error);
}

// ---- On the GPU ----

/// One convolution case: y = chain(conv(x) [+ bias]) with an optional residual input r.
struct ConvCase {
  std::string name;
  int64_t cin = 16, cout = 32, h = 11, w = 10, k = 3, stride = 1, pad = 1, dil = 1, groups = 1;
  bool bias = true;
  enum Chain { None, Relu, SumRelu, Sum, Sigmoid, ReluSum } chain = None;
};

TEST(EngineCuda, NhwcConvolutionMatchesCpu) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_nhwc")) GTEST_SKIP() << "built without cuDNN";
  using C = ConvCase;
  std::vector<ConvCase> cases = {
      {"3x3 bias", 16, 32, 11, 10, 3, 1, 1, 1, 1, true, C::None},
      {"3x3 bias relu (fused)", 16, 32, 11, 10, 3, 1, 1, 1, 1, true, C::Relu},
      {"3x3 bias + residual, relu (fused)", 16, 32, 11, 10, 3, 1, 1, 1, 1, true, C::SumRelu},
      {"3x3 no bias + residual, relu (fused, zero bias)", 16, 32, 11, 10, 3, 1, 1, 1, 1, false, C::SumRelu},
      {"3x3 bias + residual (identity)", 16, 32, 11, 10, 3, 1, 1, 1, 1, true, C::Sum},
      {"3x3 bias sigmoid (post-op pass)", 16, 32, 11, 10, 3, 1, 1, 1, 1, true, C::Sigmoid},
      {"3x3 bias relu then residual (post-op pass)", 16, 32, 11, 10, 3, 1, 1, 1, 1, true, C::ReluSum},
      {"no bias, no post-ops", 16, 32, 11, 10, 3, 1, 1, 1, 1, false, C::None},
      {"1x1 bias relu", 64, 32, 9, 9, 1, 1, 0, 1, 1, true, C::Relu},
      {"1x1 stride 2 (downsample)", 32, 64, 10, 10, 1, 2, 0, 1, 1, true, C::None},
      {"3x3 stride 2 relu", 16, 32, 13, 12, 3, 2, 1, 1, 1, true, C::Relu},
      {"3x3 dilation 2", 16, 16, 12, 12, 3, 1, 2, 2, 1, true, C::Relu},
      {"grouped 4", 32, 64, 9, 9, 3, 1, 1, 1, 4, true, C::Relu},
      {"depthwise", 32, 32, 10, 10, 3, 1, 1, 1, 32, true, C::Relu},
      {"7x7 stride 2 on 3 channels (stem)", 3, 16, 20, 20, 7, 2, 3, 1, 1, true, C::Relu},
  };
  const cuda::ConvStats before = cuda::conv_stats();
  std::mt19937 rng(77);
  for (const ConvCase& cc : cases) {
    const int64_t oh = (cc.h + 2 * cc.pad - cc.dil * (cc.k - 1) - 1) / cc.stride + 1;
    const int64_t ow = (cc.w + 2 * cc.pad - cc.dil * (cc.k - 1) - 1) / cc.stride + 1;
    HostTensor kw = random_tensor(DType::Float32, {cc.cout, cc.cin / cc.groups, cc.k, cc.k}, rng, -0.3, 0.3);
    HostTensor bw = random_tensor(DType::Float32, {cc.cout}, rng);
    HostTensor x = random_tensor(DType::Float32, {2, cc.cin, cc.h, cc.w}, rng);
    HostTensor r = random_tensor(DType::Float32, {2, cc.cout, oh, ow}, rng);
    bool residual = cc.chain == C::SumRelu || cc.chain == C::Sum || cc.chain == C::ReluSum;
    auto make = [&](Network& net) {
      Tensor* xt = net.add_input("x", DType::Float32, x.sizes());
      Tensor* rt = residual ? net.add_input("r", DType::Float32, r.sizes()) : nullptr;
      ConvolutionParams p;
      p.stride = {cc.stride, cc.stride};
      p.pre_padding = p.post_padding = {cc.pad, cc.pad};
      p.dilation = {cc.dil, cc.dil};
      p.groups = cc.groups;
      Tensor* y =
          net.add_convolution("conv", xt, Weights("w", kw), cc.bias ? Weights("b", bw) : Weights(), p);
      if (cc.chain == C::Relu || cc.chain == C::ReluSum)
        y = net.add_activation("relu", y, ActivationKind::Relu);
      if (cc.chain == C::Sigmoid) y = net.add_activation("sigmoid", y, ActivationKind::Sigmoid);
      if (residual) y = net.add_elementwise("add", y, rt, ElementwiseOp::Add);
      if (cc.chain == C::SumRelu) y = net.add_activation("relu2", y, ActivationKind::Relu);
      y->set_name("y");
      net.mark_output(y);
    };
    std::map<std::string, HostTensor> feed = {{"x", x}};
    if (residual) feed["r"] = r;
    Network cpu_net;
    make(cpu_net);
    HostTensor want = run(build(cpu_net, config_for("cpu", DType::Float32, false)), feed)[0];
    for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
      std::string what = cc.name + " " + dtype_name(dt);
      SCOPED_TRACE(what);
      Network net;
      make(net);
      auto plan = build(net, config_for("cuda", dt, false));
      int convs = 0;
      for (const auto& l : plan->layers()) {
        if (l.kind != LayerKind::Convolution) continue;
        ++convs;
        // Depthwise and grouped convolutions take Kiln's kernels (nhwc_conv_test.cpp), the first rows of an
        // untimed build; the others cudnn_nhwc in fp32 and the graph API (conv_graph_test.cpp) in fp16 /
        // bf16.
        if (cc.groups > 1) {
          EXPECT_EQ(l.tactic, cc.groups == cc.cin && cc.cout == cc.cin ? "depthwise_nhwc" : "grouped_nhwc")
              << describe(plan->layers());
        } else if (dt == DType::Float32) {
          EXPECT_EQ(l.tactic, "cudnn_nhwc") << describe(plan->layers());
        } else {
          EXPECT_EQ(l.tactic, "cudnn_graph") << describe(plan->layers());
        }
        EXPECT_EQ(l.output_formats[0], TensorFormat::ChannelsLast);
      }
      EXPECT_EQ(convs, 1) << describe(plan->layers());
      expect_near_scaled(run(plan, feed)[0], want, tolerance(dt), what);
    }
  }
  const cuda::ConvStats after = cuda::conv_stats();
  std::printf("nhwc conv: fused plans %lld (refused by cuDNN %lld), unfused fusable plans %lld\n",
              static_cast<long long>(after.fused_plans - before.fused_plans),
              static_cast<long long>(after.fused_refused - before.fused_refused),
              static_cast<long long>(after.unfused_plans - before.unfused_plans));
  // The ReLU chains always try the fused call; cuDNN must take at least some of them.
  EXPECT_GT(after.fused_plans - before.fused_plans, after.fused_refused - before.fused_refused);
}

TEST(EngineCuda, NhwcConvPoolConvHasReformatsOnlyAtTheBindings) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_nhwc")) GTEST_SKIP() << "built without cuDNN";
  std::mt19937 rng(78);
  const int64_t c = 32;
  HostTensor k1 = random_tensor(DType::Float32, {c, 8, 3, 3}, rng, -0.3, 0.3),
             b1 = random_tensor(DType::Float32, {c}, rng);
  HostTensor k2 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.1, 0.1),
             b2 = random_tensor(DType::Float32, {c}, rng);
  auto make = [&](Network& net) {
    Tensor* x = net.add_input("x", DType::Float32, {2, 8, 16, 14});
    Tensor* y = net.add_convolution("conv1", x, Weights("w1", k1), Weights("b1", b1), pad1());
    y = net.add_activation("relu1", y, ActivationKind::Relu);
    PoolingParams pp;  // ResNet's stem pool: 3x3, stride 2, pad 1
    pp.window = {3, 3};
    pp.stride = {2, 2};
    pp.pre_padding = pp.post_padding = {1, 1};
    pp.dilation = {1, 1};
    Tensor* p = net.add_pooling("maxpool", y, pp);
    y = net.add_convolution("conv2", p, Weights("w2", k2), Weights("b2", b2), pad1());
    y = net.add_elementwise("add", y, p, ElementwiseOp::Add);
    y = net.add_activation("relu2", y, ActivationKind::Relu);
    y->set_name("y");
    net.mark_output(y);
  };
  HostTensor x = random_tensor(DType::Float32, {2, 8, 16, 14}, rng);
  Network cpu_net;
  make(cpu_net);
  HostTensor want = run(build(cpu_net, config_for("cpu", DType::Float32, false)), {{"x", x}})[0];
  for (DType dt : {DType::Float32, DType::Float16}) {
    for (bool timed : {false, true}) {
      std::string what = std::string(dtype_name(dt)) + (timed ? " timed" : " untimed");
      SCOPED_TRACE(what);
      Network net;
      make(net);
      auto plan = build(net, config_for("cuda", dt, timed));
      auto layers = plan->layers();
      std::printf("nhwc conv-pool-conv plan (%s):%s\n", what.c_str(), describe(layers).c_str());
      if (!timed) {
        // Without timing: every conv and the pool channels-last; a reformat after the input (and its cast)
        // and one before the output, nothing in between.
        int reformats = 0, first_nhwc = -1, last_nhwc = -1;
        for (size_t i = 0; i < layers.size(); ++i) {
          const auto& l = layers[i];
          if (l.kind == LayerKind::Reformat) ++reformats;
          if (l.kind == LayerKind::Convolution || l.kind == LayerKind::Pooling) {
            EXPECT_EQ(l.tactic, l.kind == LayerKind::Pooling ? "nhwc"
                                : dt == DType::Float32       ? "cudnn_nhwc"
                                                             : "cudnn_graph")
                << l.name;
            for (TensorFormat f : l.input_formats) EXPECT_EQ(f, TensorFormat::ChannelsLast) << l.name;
            EXPECT_EQ(l.output_formats[0], TensorFormat::ChannelsLast) << l.name;
            if (first_nhwc < 0) first_nhwc = static_cast<int>(i);
            last_nhwc = static_cast<int>(i);
          }
        }
        EXPECT_EQ(reformats, 2) << describe(layers);
        ASSERT_EQ(last_nhwc - first_nhwc, 2) << describe(layers);  // conv1, maxpool, conv2 back to back
        EXPECT_EQ(layers[first_nhwc + 1].inputs[0], layers[first_nhwc].outputs[0]);
        EXPECT_EQ(layers[first_nhwc + 2].inputs[0], layers[first_nhwc + 1].outputs[0]);
        ASSERT_EQ(layers[first_nhwc + 2].inputs.size(), 2u);  // conv2's residual is the pool's output
        EXPECT_EQ(layers[first_nhwc + 2].inputs[1], layers[first_nhwc + 1].outputs[0]);
      }
      HostTensor got = run(plan, {{"x", x}})[0];
      expect_near_scaled(got, want, tolerance(dt), what);
      // The plan (with any tuned cuDNN algorithms) loads and computes the same bits.
      auto loaded = Plan::deserialize(plan->serialize());
      EXPECT_TRUE(same_bytes(run(loaded, {{"x", x}})[0], got)) << what << ": loaded plan differs";
    }
  }
}

TEST(EngineCuda, NhwcConvolutionTunedAlgorithmIsStoredAndReused) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_nhwc")) GTEST_SKIP() << "built without cuDNN";
  const Backend& b = *shared_backend("cuda");
  std::mt19937 rng(79);
  for (const std::string tactic : {"cudnn_nhwc", "cudnn"}) {
    for (DType dt : {DType::Float16, DType::Float32}) {
      SCOPED_TRACE(tactic + " " + dtype_name(dt));
      TensorFormat f = tactic == "cudnn_nhwc" ? TensorFormat::ChannelsLast : TensorFormat::Plain;
      ResidualConvCase rc(dt, f, rng);
      auto& t = rc.t;
      const auto& in = rc.in;
      const auto& views = rc.views;
      const TensorView& out = rc.out;

      cuda::ConvStats s0 = cuda::conv_stats();
      t->info.tune = true;
      std::unique_ptr<Kernel> tuned = b.create_kernel(t->info, tactic);
      std::vector<uint8_t> data = tuned->plan_data();
      ASSERT_FALSE(data.empty()) << "no algorithm timed";
      EXPECT_EQ(cuda::conv_stats().tuned, s0.tuned + 1);
      ConvPlanData d;
      std::string why;
      ASSERT_TRUE(cuda::decode_conv_plan_data(data, 8, 4, &d, &why)) << why;
      EXPECT_EQ(d.input, t->info.inputs[0].opt);
      EXPECT_EQ(d.layout, f == TensorFormat::ChannelsLast ? 1 : 0);
      if (dt == DType::Float32) {
        EXPECT_EQ(d.math, 3);  // CUDNN_FMA_MATH: strict fp32, no TF32
      }

      t->info.tune = false;
      t->info.plan_data = &data;
      std::unique_ptr<Kernel> stored = b.create_kernel(t->info, tactic);
      EXPECT_EQ(cuda::conv_stats().stored, s0.stored + 1);
      EXPECT_EQ(stored->plan_data(), data);
      HostTensor a = run_kernel(*tuned, views, in, out), c = run_kernel(*stored, views, in, out);
      EXPECT_TRUE(same_bytes(a, c)) << "stored algorithm computes other bits than the tuned one";

      // Foreign (other opt dims) and corrupt data: the heuristic, with the same results up to the tolerance.
      ConvPlanData other = d;
      other.input[0] += 1;
      std::vector<uint8_t> foreign = cuda::encode_conv_plan_data(other), corrupt = data;
      corrupt[0] ^= 0xff;
      for (const auto* bad : {&foreign, &corrupt}) {
        t->info.plan_data = bad;
        std::unique_ptr<Kernel> k = b.create_kernel(t->info, tactic);
        EXPECT_TRUE(k->plan_data().empty());
        expect_near_scaled(from_format(run_kernel(*k, views, in, out), f), from_format(a, f),
                           dt == DType::Float32 ? 1e-5 : 1e-2, "heuristic vs tuned");
      }
      EXPECT_EQ(cuda::conv_stats().rejected, s0.rejected + 2);
      t->info.plan_data = nullptr;
      // Kernels reject formats other than their tactic's.
      t->info.inputs[1].format = f == TensorFormat::Plain ? TensorFormat::ChannelsLast : TensorFormat::Plain;
      EXPECT_THROW(b.create_kernel(t->info, tactic), kiln::Error);
    }
  }
}

// The algorithm search takes no FFT or Winograd algorithm (tile transforms, cuDNN algorithms 4-7) unless the
// build allows reduced-precision tactics: in fp32 their rounding moved the zoo's inception_v3 by 6e-3 of its
// output (it took 38 of them); in fp16 never. Shapes where cuDNN offers them: 3x3, 5x5 and 1x7 kernels.
TEST(EngineCuda, ConvolutionSearchTakesTileTransformsOnlyWhenReducedPrecisionIsAllowed) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn")) GTEST_SKIP() << "built without cuDNN";
  const Backend& b = *shared_backend("cuda");
  struct Shape {
    int64_t n, c, k, hw, kh, kw;
  };
  int tiles_when_allowed = 0;
  for (const Shape& sh : {Shape{8, 64, 64, 56, 3, 3}, Shape{2, 48, 64, 10, 5, 5},
                          Shape{2, 128, 128, 10, 1, 7}, Shape{1, 256, 256, 14, 3, 3}}) {
    for (DType dt : {DType::Float32, DType::Float16}) {
      for (bool allowed : {false, true}) {
        SCOPED_TRACE(std::to_string(sh.c) + "x" + std::to_string(sh.hw) + " kernel " + std::to_string(sh.kh) +
                     "x" + std::to_string(sh.kw) + " " + dtype_name(dt) + (allowed ? " allowed" : ""));
        ConvolutionParams p;
        p.pre_padding = p.post_padding = {sh.kh / 2, sh.kw / 2};
        const Dims x{sh.n, sh.c, sh.hw, sh.hw}, y{sh.n, sh.k, sh.hw, sh.hw};
        TestLayer t(LayerKind::Convolution, p, {{x, TensorFormat::Plain}}, {y, TensorFormat::Plain}, dt);
        std::mt19937 rng(81);
        t.layer.weights.push_back(Weights(random_tensor(DType::Float32, {sh.k, sh.c, sh.kh, sh.kw}, rng)));
        t.info.tune = true;
        t.info.reduced_precision = allowed;
        std::vector<uint8_t> data = b.create_kernel(t.info, "cudnn")->plan_data();
        ASSERT_FALSE(data.empty()) << "no algorithm timed";
        ConvPlanData d;
        std::string why;
        ASSERT_TRUE(cuda::decode_conv_plan_data(data, 8, 4, &d, &why)) << why;
        const bool tile = d.algo >= 4 && d.algo <= 7;
        if (!allowed || dt != DType::Float32) {
          EXPECT_FALSE(tile) << "algorithm " << d.algo;
        }
        tiles_when_allowed += allowed && tile ? 1 : 0;
      }
    }
  }
  std::printf("fp32 shapes that chose a tile transform where allowed: %d of 4\n", tiles_when_allowed);
}

TEST(EngineCuda, ChannelsLastPoolingEqualsPlanarPooling) {
  KILN_REQUIRE_GPU();
  const Backend& b = *shared_backend("cuda");
  std::mt19937 rng(80);
  struct PoolCase {
    std::string name;
    PoolingParams::Kind kind;
    std::vector<int64_t> window, stride, pad;
    bool ceil = false, include_pad = true, adaptive = false;
    Dims out;  // adaptive output size
  };
  std::vector<PoolCase> cases = {
      {"max 3x3 s2 p1", PoolingParams::Max, {3, 3}, {2, 2}, {1, 1}},
      {"max 2x2 s2 ceil", PoolingParams::Max, {2, 2}, {2, 2}, {0, 0}, true},
      {"avg 3x3 s2 p1 exclude pad ceil", PoolingParams::Average, {3, 3}, {2, 2}, {1, 1}, true, false},
      {"avg 3x3 s1 p1 include pad", PoolingParams::Average, {3, 3}, {1, 1}, {1, 1}},
      {"adaptive avg 1x1 (global)", PoolingParams::Average, {}, {}, {}, false, true, true, {1, 1}},
      {"adaptive avg 3x2", PoolingParams::Average, {}, {}, {}, false, true, true, {3, 2}},
      {"adaptive max 2x3", PoolingParams::Max, {}, {}, {}, false, true, true, {2, 3}},
      // Global pooling runs as a reduction (in double, rounded once): the planar and channels-last kernels
      // sum in other orders, which a double sum of at most 121 values cannot tell apart after rounding.
      {"adaptive max 1x1 (global)", PoolingParams::Max, {}, {}, {}, false, true, true, {1, 1}},
  };
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (const Dims& xd : {Dims{2, 24, 11, 9}, Dims{1, 3, 7, 7}, Dims{3, 64, 8, 8}}) {
      for (const PoolCase& pc : cases) {
        std::string what = pc.name + " " + dtype_name(dt) + " C=" + std::to_string(xd[1]);
        SCOPED_TRACE(what);
        PoolingParams p;
        p.kind = pc.kind;
        p.adaptive = pc.adaptive;
        p.count_include_pad = pc.include_pad;
        p.ceil_mode = pc.ceil;
        Dims yd = {xd[0], xd[1], 0, 0};
        if (pc.adaptive) {
          p.output_size = pc.out;
          yd[2] = pc.out[0];
          yd[3] = pc.out[1];
        } else {
          p.window = pc.window;
          p.stride = pc.stride;
          p.pre_padding = p.post_padding = pc.pad;
          p.dilation = {1, 1};
          for (int s = 0; s < 2; ++s) {
            int64_t span = xd[2 + s] + 2 * pc.pad[s] - pc.window[s];
            int64_t o = (pc.ceil ? (span + pc.stride[s] - 1) / pc.stride[s] : span / pc.stride[s]) + 1;
            if (pc.ceil && (o - 1) * pc.stride[s] >= xd[2 + s] + pc.pad[s]) --o;  // last window starts inside
            yd[2 + s] = o;
          }
        }
        HostTensor x = random_tensor(dt, xd, rng, -4, 4);
        TestLayer planar(LayerKind::Pooling, p, {{xd, TensorFormat::Plain}}, {yd, TensorFormat::Plain}, dt);
        TestLayer nhwc(LayerKind::Pooling, p, {{xd, TensorFormat::ChannelsLast}},
                       {yd, TensorFormat::ChannelsLast}, dt);
        auto kp = b.create_kernel(planar.info, "generic");
        auto kn = b.create_kernel(nhwc.info, "nhwc");
        HostTensor want = run_kernel(*kp, {TensorView{nullptr, dt, xd}}, {x}, TensorView{nullptr, dt, yd});
        HostTensor got = run_kernel(*kn, {TensorView{nullptr, dt, xd, TensorFormat::ChannelsLast}},
                                    {to_format(x, TensorFormat::ChannelsLast)},
                                    TensorView{nullptr, dt, yd, TensorFormat::ChannelsLast});
        EXPECT_TRUE(same_bytes(from_format(got, TensorFormat::ChannelsLast), want)) << what;
        // The nhwc kernel refuses planar tensors.
        EXPECT_THROW(b.create_kernel(planar.info, "nhwc"), kiln::Error);
      }
    }
  }
}

TEST(EngineCuda, ReformatKernelRoundTrip) {
  KILN_REQUIRE_GPU();
  const Backend& b = *shared_backend("cuda");
  std::mt19937 rng(81);
  const std::vector<Dims> shapes = {{2, 5, 7},    {2, 3, 5, 7},    {1, 33, 17, 9},  {2, 64, 40, 40},
                                    {4, 8, 1, 1}, {2, 3, 4, 5, 6}, {1, 16, 3, 8, 8}};
  for (DType dt : {DType::Float32, DType::Float16, DType::Int64, DType::Bool, DType::Int8}) {
    for (const Dims& d : shapes) {
      std::string what =
          std::string(dtype_name(dt)) + " rank " + std::to_string(d.size()) + " C=" + std::to_string(d[1]);
      SCOPED_TRACE(what);
      HostTensor x = random_tensor(dt, d, rng, dt == DType::Bool ? 0 : -100, dt == DType::Bool ? 2 : 100);
      TestLayer to_cl(LayerKind::Reformat, ReformatParams{TensorFormat::Plain, TensorFormat::ChannelsLast},
                      {{d, TensorFormat::Plain}}, {d, TensorFormat::ChannelsLast}, dt);
      TestLayer to_plain(LayerKind::Reformat, ReformatParams{TensorFormat::ChannelsLast, TensorFormat::Plain},
                         {{d, TensorFormat::ChannelsLast}}, {d, TensorFormat::Plain}, dt);
      ASSERT_EQ(b.tactics(to_cl.info).at(0).name, "generic");
      TacticFormats f = b.formats(to_cl.info, "generic");
      EXPECT_EQ(f.inputs, (std::vector<TensorFormat>{TensorFormat::Plain}));
      EXPECT_EQ(f.outputs, (std::vector<TensorFormat>{TensorFormat::ChannelsLast}));
      auto k1 = b.create_kernel(to_cl.info, "generic");
      auto k2 = b.create_kernel(to_plain.info, "generic");
      HostTensor cl = run_kernel(*k1, {TensorView{nullptr, dt, d}}, {x},
                                 TensorView{nullptr, dt, d, TensorFormat::ChannelsLast});
      EXPECT_TRUE(same_bytes(cl, to_format(x, TensorFormat::ChannelsLast))) << "plain -> channels_last";
      HostTensor back = run_kernel(*k2, {TensorView{nullptr, dt, d, TensorFormat::ChannelsLast}}, {cl},
                                   TensorView{nullptr, dt, d});
      EXPECT_TRUE(same_bytes(back, x)) << "channels_last -> plain";
      // Formats that differ from the params are rejected.
      to_cl.info.outputs[0].format = TensorFormat::Plain;
      EXPECT_THROW(b.create_kernel(to_cl.info, "generic"), kiln::Error);
    }
  }
}

TEST(EngineCuda, ChannelsLastPostOpPassMatchesReference) {
  KILN_REQUIRE_GPU();
  const Backend& be = *shared_backend("cuda");
  std::mt19937 rng(82);
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (const Dims& d : {Dims{2, 6, 7, 7}, Dims{1, 13, 3, 5}, Dims{2, 64, 4, 4}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " C=" + std::to_string(d[1]));
      DeviceBuffers dev{&be, {}};
      auto up = [&](const HostTensor& t) {
        void* p = dev.add(t.nbytes());
        be.copy(p, t.data(), t.nbytes(), CopyKind::HostToDevice, nullptr);
        return p;
      };
      HostTensor y = random_tensor(dt, d, rng, -3, 3), bias = random_tensor(dt, {d[1]}, rng);
      HostTensor r = random_tensor(dt, d, rng, -2, 2);
      HostTensor ycl = to_format(y, TensorFormat::ChannelsLast),
                 rcl = to_format(r, TensorFormat::ChannelsLast);
      // bias, + 0.5 r, ReLU over channels-last buffers
      cuda::PostOpPass pass({sum_op(0.5), relu_op()}, 0, up(bias), 1, 1, dt, true);
      KernelArgs args;
      args.inputs = {TensorView{nullptr, dt, d, TensorFormat::ChannelsLast},
                     TensorView{up(rcl), dt, d, TensorFormat::ChannelsLast}};
      args.outputs = {TensorView{up(ycl), dt, d, TensorFormat::ChannelsLast}};
      ASSERT_TRUE(pass.uses_epilogue(args));
      pass.run(args, "test epilogue");
      HostTensor fast(dt, d);
      be.copy(fast.mutable_data(), args.outputs[0].data, fast.nbytes(), CopyKind::DeviceToHost, nullptr);
      args.outputs[0].data = up(ycl);
      pass.run_generic(args);
      cuda::check_launch("test generic post-ops");
      HostTensor generic(dt, d);
      be.copy(generic.mutable_data(), args.outputs[0].data, generic.nbytes(), CopyKind::DeviceToHost,
              nullptr);
      be.synchronize(nullptr);
      // Reference in double over the stored values, then rounded to the dtype like the kernels' store:
      // both paths compute in float, so they may differ from it by one rounding of the result (<= 1 ulp of
      // the dtype, i.e. 2^-8 relative for bf16): tolerance 1e-2 relative + 1e-6 absolute.
      HostTensor want(dt, d);
      for (int64_t i = 0; i < y.numel(); ++i) {
        std::vector<int64_t> idx = unravel(i, d);
        double v = y.get_as_double(i) + bias.get_as_double(idx[1]) + 0.5 * r.get_as_double(i);
        want.set_from_double(i, std::max(v, 0.0));
      }
      HostTensor f1 = from_format(fast, TensorFormat::ChannelsLast),
                 g1 = from_format(generic, TensorFormat::ChannelsLast);
      for (int64_t i = 0; i < want.numel(); ++i) {
        double w = want.get_as_double(i);
        ASSERT_NEAR(f1.get_as_double(i), w, 1e-2 * std::fabs(w) + 1e-6) << "epilogue at " << i;
        ASSERT_NEAR(g1.get_as_double(i), w, 1e-2 * std::fabs(w) + 1e-6) << "generic at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
