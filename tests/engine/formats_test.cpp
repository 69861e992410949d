// Activation memory formats: consecutive oneDNN convolutions pass blocked tensors to each other (Reformat
// layers only at the plan's bindings and around layers that need Plain), numbers match a naive double
// reference, and a blocked plan round-trips bit-identically.
//
// Plans here are built with timing_iterations = 0, so every layer takes its first tactic (the fast kernels
// before "ref"; "onednn_blocked" first for convolutions): the structure checked does not depend on timing.
// Tolerance: fp32 allclose(rtol = 1e-4, atol = 1e-4): oneDNN sums the 3x3xC products in another order than
// the double reference (errors of a few float ulps of O(1) partial sums), and reformats copy values exactly.

#include <cstdio>
#include <cstring>
#include <optional>

#include "engine/backends/cpu/kernel_registry.h"
#include "engine_test_util.h"
#include "kiln/engine/plan.h"
#include "kiln/support/host_math.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine {
namespace {
using namespace testing;

constexpr double kFormatRtol = 1e-4, kFormatAtol = 1e-4;

void relu_in_place(std::vector<double>& v) {
  for (auto& x : v) x = std::max(x, 0.0);
}

std::string describe_layers(const std::vector<PlanLayerInfo>& layers) {
  std::string s;
  for (const auto& l : layers) {
    s += "\n  " + l.name + " (" + layer_kind_name(l.kind) + ", " + l.tactic + "):";
    for (size_t i = 0; i < l.inputs.size(); ++i) s += " " + l.inputs[i] + "[" + tensor_format_name(l.input_formats[i]) + "]";
    s += " ->";
    for (size_t i = 0; i < l.outputs.size(); ++i) {
      s += " " + l.outputs[i] + "[" + tensor_format_name(l.output_formats[i]) + "]";
    }
  }
  return s;
}

/// conv-relu_in_place, conv + residual(x)-relu_in_place, conv-relu_in_place: 32 channels, 10x12 (a basic
/// block and one more conv).
struct ConvChain {
  static constexpr int64_t c = 32, h = 10, w = 12;
  Network net;
  HostTensor k[3], b[3];
  explicit ConvChain(std::mt19937& rng) {
    for (int i = 0; i < 3; ++i) {
      k[i] = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.1, 0.1);
      b[i] = random_tensor(DType::Float32, {c}, rng);
    }
    Tensor* x = net.add_input("x", DType::Float32, {1, c, h, w});
    ConvolutionParams p;
    p.pre_padding = p.post_padding = {1, 1};
    Tensor* y = net.add_convolution("conv1", x, Weights("conv1.weight", k[0]), Weights("conv1.bias", b[0]), p);
    y = net.add_activation("relu1", y, ActivationKind::Relu);
    y = net.add_convolution("conv2", y, Weights("conv2.weight", k[1]), Weights("conv2.bias", b[1]), p);
    y = net.add_elementwise("add", y, x, ElementwiseOp::Add);
    y = net.add_activation("relu2", y, ActivationKind::Relu);
    y = net.add_convolution("conv3", y, Weights("conv3.weight", k[2]), Weights("conv3.bias", b[2]), p);
    y = net.add_activation("relu3", y, ActivationKind::Relu);
    y->set_name("y");
    net.mark_output(y);
  }
  std::vector<double> reference(const HostTensor& in) const {
    std::vector<double> xv = values(in);
    auto a = conv3x3(xv, c, h, w, k[0], b[0]);
    relu_in_place(a);
    auto r = conv3x3(a, c, h, w, k[1], b[1]);
    for (size_t i = 0; i < r.size(); ++i) r[i] += xv[i];
    relu_in_place(r);
    auto y = conv3x3(r, c, h, w, k[2], b[2]);
    relu_in_place(y);
    return y;
  }
};

BuilderConfig untimed() {
  BuilderConfig config;
  config.timing_iterations = 0;
  return config;
}

TEST(EngineFormats, E4m3StoresEachElementInOneByteInPlainOrder) {
  EXPECT_STREQ(tensor_format_name(TensorFormat::E4M3), "e4m3");
  for (size_t rank : {0u, 1u, 2u, 3u, 6u}) EXPECT_TRUE(format_applies(TensorFormat::E4M3, rank)) << rank;
  EXPECT_EQ(format_element_size(TensorFormat::E4M3, DType::Float16), 1u);
  EXPECT_EQ(format_element_size(TensorFormat::E4M3, DType::Float32), 1u);
  EXPECT_EQ(format_element_size(TensorFormat::Plain, DType::Float32), 4u);
  EXPECT_EQ(format_element_size(TensorFormat::Blocked8c, DType::Float16), 2u);
  EXPECT_EQ(format_bytes(TensorFormat::E4M3, DType::Float16, {2, 3, 5}), 30);
  EXPECT_EQ(format_bytes(TensorFormat::Blocked8c, DType::Float32, {1, 3, 2}), 8 * 2 * 4);
  EXPECT_EQ(format_offset(TensorFormat::E4M3, {2, 3, 5, 7}, {1, 2, 3, 4}),
            format_offset(TensorFormat::Plain, {2, 3, 5, 7}, {1, 2, 3, 4}));
  const TensorView v{nullptr, DType::Float16, {4, 8}, TensorFormat::E4M3};
  EXPECT_EQ(v.nbytes(), 32u);
}

// E4M3 is an element encoding scaled by a tensor's range: no CPU row converts it (a forged plan asking for it
// fails to load instead of writing fp32 elements into a buffer of bytes).
TEST(EngineFormats, CpuReformatsRefuseE4m3) {
  const Backend* cpu = shared_backend("cpu");
  ASSERT_NE(cpu, nullptr);
  for (const auto& [from, to] : {std::pair{TensorFormat::Plain, TensorFormat::E4M3},
                                 std::pair{TensorFormat::E4M3, TensorFormat::Plain}}) {
    Layer layer;
    layer.name = "r";
    layer.kind = LayerKind::Reformat;
    layer.params = ReformatParams{from, to};
    LayerInfo info;
    info.layer = &layer;
    const Dims d = {2, 8, 4, 4};
    info.inputs = {TensorInfo{"x", DType::Float32, d, d, d, from, DynamicRange(-1.0, 1.0)}};
    info.outputs = {TensorInfo{"y", DType::Float32, d, d, d, to, DynamicRange(-1.0, 1.0)}};
    std::string why;
    EXPECT_FALSE(cpu->supports(info, &why)) << tensor_format_name(from) << " -> " << tensor_format_name(to);
    EXPECT_NE(why.find("e4m3"), std::string::npos) << why;
    for (const char* tactic : {"ref", "onednn"}) EXPECT_THROW(cpu->create_kernel(info, tactic), kiln::Error);
  }
}

TEST(EngineFormats, ConvChainWithResidualPassesBlockedTensors) {
  std::mt19937 rng(71);
  ConvChain m(rng);
  auto plan = build(m.net, untimed());
  auto layers = plan->layers();
  std::printf("formats: conv chain plan:%s\n", describe_layers(layers).c_str());
  SCOPED_TRACE(describe_layers(layers));
  ASSERT_EQ(count_kind(layers, LayerKind::Convolution), 3);
  // Reformats only at the bindings: x into the blocked format (read by conv1 and as conv2's residual), and
  // conv3's output back to the plain y.
  EXPECT_EQ(count_kind(layers, LayerKind::Reformat), 2);
  ASSERT_EQ(layers.size(), 5u);
  EXPECT_EQ(layers[0].kind, LayerKind::Reformat);
  EXPECT_EQ(layers[0].inputs[0], "x");
  EXPECT_EQ(layers[4].kind, LayerKind::Reformat);
  EXPECT_EQ(layers[4].outputs[0], "y");
  EXPECT_EQ(layers[4].output_formats[0], TensorFormat::Plain);
  for (int i = 1; i <= 3; ++i) {
    const PlanLayerInfo& conv = layers[i];
    ASSERT_EQ(conv.kind, LayerKind::Convolution) << i;
    EXPECT_EQ(conv.tactic, "onednn_blocked");
    for (TensorFormat f : conv.input_formats) EXPECT_NE(f, TensorFormat::Plain) << conv.name;
    EXPECT_NE(conv.output_formats[0], TensorFormat::Plain) << conv.name;
  }
  // Each convolution reads its predecessor's output directly; conv2's residual is conv1's blocked input.
  EXPECT_EQ(layers[2].inputs[0], layers[1].outputs[0]);
  EXPECT_EQ(layers[3].inputs[0], layers[2].outputs[0]);
  ASSERT_EQ(layers[2].inputs.size(), 2u);
  EXPECT_EQ(layers[2].inputs[1], layers[1].inputs[0]);
  for (int batch_run = 0; batch_run < 2; ++batch_run) {
    HostTensor in = random_tensor(DType::Float32, {1, m.c, m.h, m.w}, rng);
    expect_close(run(plan, {{"x", in}})[0], m.reference(in), kFormatRtol, kFormatAtol, "blocked conv chain");
  }
}

TEST(EngineFormats, ReformatsAroundLayersThatNeedPlain) {
  std::mt19937 rng(72);
  const int64_t c = 16, h = 7, w = 9;
  HostTensor k1 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2), b1 = random_tensor(DType::Float32, {c}, rng);
  HostTensor k2 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2), b2 = random_tensor(DType::Float32, {c}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, c, h, w});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv1", x, k1, b1, p);
  y = net.add_softmax("softmax", y, 1);  // over channels: no oneDNN kernel here, it reads Plain
  y = net.add_convolution("conv2", y, k2, b2, p);
  y->set_name("y");
  net.mark_output(y);
  auto plan = build(net, untimed());
  auto layers = plan->layers();
  SCOPED_TRACE(describe_layers(layers));
  // x -> blocked, conv1, -> plain, softmax, -> blocked, conv2, -> plain y.
  ASSERT_EQ(layers.size(), 7u);
  const LayerKind want[] = {LayerKind::Reformat, LayerKind::Convolution, LayerKind::Reformat, LayerKind::Softmax,
                            LayerKind::Reformat, LayerKind::Convolution, LayerKind::Reformat};
  for (size_t i = 0; i < layers.size(); ++i) EXPECT_EQ(layers[i].kind, want[i]) << i;
  EXPECT_EQ(layers[3].input_formats[0], TensorFormat::Plain);
  EXPECT_EQ(layers[3].output_formats[0], TensorFormat::Plain);
  EXPECT_NE(layers[1].output_formats[0], TensorFormat::Plain);
  EXPECT_NE(layers[5].input_formats[0], TensorFormat::Plain);

  HostTensor in = random_tensor(DType::Float32, {1, c, h, w}, rng);
  auto a = conv3x3(values(in), c, h, w, k1, b1);
  for (int64_t s = 0; s < h * w; ++s) {  // softmax over channels
    double mx = -1e300, sum = 0;
    for (int64_t ch = 0; ch < c; ++ch) mx = std::max(mx, a[ch * h * w + s]);
    for (int64_t ch = 0; ch < c; ++ch) sum += std::exp(a[ch * h * w + s] - mx);
    for (int64_t ch = 0; ch < c; ++ch) a[ch * h * w + s] = std::exp(a[ch * h * w + s] - mx) / sum;
  }
  expect_close(run(plan, {{"x", in}})[0], conv3x3(a, c, h, w, k2, b2), kFormatRtol, kFormatAtol,
               "conv-softmax-conv");
}

TEST(EngineFormats, ChannelsNotAMultipleOfTheBlockArePadded) {
  // 12 channels in a blocked format leave a padded channel tail (which must stay zero for oneDNN); a dynamic
  // batch makes the convolutions and reformats create primitives per shape, in the plan's formats.
  std::mt19937 rng(73);
  const int64_t c = 12, h = 5, w = 6;
  HostTensor k1 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2), b1 = random_tensor(DType::Float32, {c}, rng);
  HostTensor k2 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2), b2 = random_tensor(DType::Float32, {c}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {-1, c, h, w});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv1", x, k1, b1, p);
  y = net.add_activation("relu", y, ActivationKind::Relu);
  y = net.add_convolution("conv2", y, k2, b2, p);
  y = net.add_elementwise("add", y, x, ElementwiseOp::Add);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config = untimed();
  OptimizationProfile prof;
  prof.set_dimensions("x", {1, c, h, w}, {2, c, h, w}, {3, c, h, w});
  config.profiles = {prof};
  auto plan = build(net, config);
  SCOPED_TRACE(describe_layers(plan->layers()));
  for (int64_t batch : {1, 3, 2}) {
    HostTensor in = random_tensor(DType::Float32, {batch, c, h, w}, rng);
    std::vector<double> xv = values(in), want;
    int64_t image = c * h * w;
    for (int64_t n = 0; n < batch; ++n) {
      std::vector<double> xi(xv.begin() + n * image, xv.begin() + (n + 1) * image);
      auto a = conv3x3(xi, c, h, w, k1, b1);
      relu_in_place(a);
      auto r = conv3x3(a, c, h, w, k2, b2);
      for (int64_t i = 0; i < image; ++i) want.push_back(r[i] + xi[i]);
    }
    expect_close(run(plan, {{"x", in}})[0], want, kFormatRtol, kFormatAtol, "batch " + std::to_string(batch));
  }
}

TEST(EngineFormats, ResidualThatIsAlsoTheConvolutionInput) {
  // y = relu_in_place(conv2(t) + t) with t = relu_in_place(conv1(x)): t is conv2's input and residual, so
  // conv2 must not write its output over t (the memory plan's in-place residual applies only when the
  // residual is read as nothing else); numbers against the naive reference.
  std::mt19937 rng(75);
  const int64_t c = 16, h = 6, w = 7;
  HostTensor k1 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2), b1 = random_tensor(DType::Float32, {c}, rng);
  HostTensor k2 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2), b2 = random_tensor(DType::Float32, {c}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, c, h, w});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* t = net.add_activation("relu1", net.add_convolution("conv1", x, k1, b1, p), ActivationKind::Relu);
  Tensor* y = net.add_convolution("conv2", t, k2, b2, p);
  y = net.add_activation("relu2", net.add_elementwise("add", y, t, ElementwiseOp::Add), ActivationKind::Relu);
  y->set_name("y");
  net.mark_output(y);
  auto plan = build(net, untimed());
  SCOPED_TRACE(describe_layers(plan->layers()));
  EXPECT_EQ(count_kind(plan->layers(), LayerKind::Convolution), 2);
  HostTensor in = random_tensor(DType::Float32, {1, c, h, w}, rng);
  auto a = conv3x3(values(in), c, h, w, k1, b1);
  relu_in_place(a);
  auto r = conv3x3(a, c, h, w, k2, b2);
  for (size_t i = 0; i < r.size(); ++i) r[i] += a[i];
  relu_in_place(r);
  expect_close(run(plan, {{"x", in}})[0], r, kFormatRtol, kFormatAtol, "residual = input");
}

TEST(EngineFormats, BlockedPlanRoundTripIsBitIdentical) {
  std::mt19937 rng(74);
  ConvChain m(rng);
  auto plan = build(m.net, untimed());
  ASSERT_GT(count_kind(plan->layers(), LayerKind::Reformat), 0);
  std::vector<uint8_t> bytes = plan->serialize();
  auto loaded = Plan::deserialize(bytes);
  EXPECT_EQ(loaded->serialize(), bytes);
  auto a = plan->layers(), b = loaded->layers();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tactic, b[i].tactic) << a[i].name;
    EXPECT_EQ(a[i].input_formats, b[i].input_formats) << a[i].name;
    EXPECT_EQ(a[i].output_formats, b[i].output_formats) << a[i].name;
  }
  EXPECT_EQ(loaded->arena_bytes(0), plan->arena_bytes(0));
  HostTensor in = random_tensor(DType::Float32, {1, m.c, m.h, m.w}, rng);
  HostTensor x = run(plan, {{"x", in}})[0], y = run(loaded, {{"x", in}})[0];
  ASSERT_EQ(x.nbytes(), y.nbytes());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.nbytes()), 0);
}

// format_view gives every element the offset format_offset gives it (ranks 3-5, channels a multiple of the
// block or not, a dim of 1), and none where a blocked format pads its channel tail.
TEST(EngineFormats, FormatViewStridesAreTheFormatsOffsets) {
  for (TensorFormat format :
       {TensorFormat::Plain, TensorFormat::ChannelsLast, TensorFormat::Blocked8c, TensorFormat::Blocked16c}) {
    for (const Dims& dims :
         std::vector<Dims>{{2, 16, 5}, {2, 32, 3, 4}, {1, 16, 2, 1, 3}, {3, 12, 2, 2}, {4, 5}}) {
      const std::string what = std::string(tensor_format_name(format)) + " " + ::testing::PrintToString(dims);
      const std::optional<FormatView> view = format_view(format, dims);
      const bool padded = dims.size() >= 3 &&
                          (format == TensorFormat::Blocked8c || format == TensorFormat::Blocked16c) &&
                          dims[1] % (format == TensorFormat::Blocked8c ? 8 : 16) != 0;
      ASSERT_EQ(view.has_value(), !padded) << what;
      if (!view) continue;
      ASSERT_EQ(view->first.size(), dims.size() + 1) << what;
      // Every multi-index: the view's offset (each logical index split over its view dims) is
      // format_offset's.
      Dims index(dims.size(), 0);
      for (int64_t flat = 0; flat < checked_numel(dims); ++flat) {
        int64_t rest = flat;
        for (size_t d = dims.size(); d-- > 0;) {
          index[d] = rest % dims[d];
          rest /= dims[d];
        }
        int64_t offset = 0;
        for (size_t d = 0; d < dims.size(); ++d) {
          int64_t i = index[d];
          for (size_t k = view->first[d + 1]; k-- > view->first[d];) {
            offset += (i % view->dims[k]) * view->strides[k];
            i /= view->dims[k];
          }
        }
        ASSERT_EQ(offset, format_offset(format, dims, index)) << what << " element " << flat;
      }
    }
  }
}

// The cpu Shuffle "vec" reads a channels-last or blocked input through its format (ConvNeXt's permute of a
// depthwise convolution's output to [N, H, W, C]): a permute, a permute then reshape, and a plain reshape (a
// format copy), each against the logical values; read Plain (a reformat first) for a padded channel tail and
// a reshape before the permutation. Exact: a copy.
TEST(EngineFormats, CpuShuffleReadsChannelsLastAndBlockedInputs) {
  const Backend& cpu = *shared_backend("cpu");
  const KernelRow& vec = *cpu::cpu_kernels().find(LayerKind::Shuffle, "vec");
  const Dims dims = {2, 16, 3, 5};
  struct Case {
    std::vector<int64_t> perm;
    Dims reshape;  // empty: none
  };
  const std::vector<Case> cases = {
      {{0, 2, 3, 1}, {}}, {{0, 2, 3, 1}, {2, 15, 16}}, {{}, {2, 16, 15}}, {{3, 1, 0, 2}, {}}};
  for (TensorFormat format :
       {TensorFormat::ChannelsLast, TensorFormat::Blocked8c, TensorFormat::Blocked16c}) {
    for (const Case& c : cases) {
      ShuffleParams p;
      p.first_perm = c.perm;
      p.has_reshape = !c.reshape.empty();
      p.reshape = c.reshape;
      Dims permuted = dims;
      for (size_t i = 0; i < c.perm.size(); ++i) permuted[i] = dims[c.perm[i]];
      const Dims out_dims = c.reshape.empty() ? permuted : c.reshape;
      Layer layer;
      layer.name = "shuffle";
      layer.kind = LayerKind::Shuffle;
      layer.params = p;
      layer.inputs = {0};
      layer.outputs = {1};
      LayerInfo info;
      info.layer = &layer;
      info.inputs.push_back({"x", DType::Float32, dims, dims, dims, format});
      info.outputs.push_back({"y", DType::Float32, out_dims, out_dims, out_dims});
      const std::string what = std::string(tensor_format_name(format)) + " perm " +
                               ::testing::PrintToString(c.perm) + " reshape " +
                               ::testing::PrintToString(c.reshape);
      std::string why;
      ASSERT_TRUE(vec.applies(info, &why)) << what << ": " << why;
      ASSERT_EQ(vec.formats_for(info).inputs, std::vector<TensorFormat>{format}) << what;
      // x's logical element i has the value i, stored at its format's offset.
      std::vector<float> stored(static_cast<size_t>(format_numel(format, dims)), -1.0f),
          y(checked_numel(out_dims), -2.0f);
      Dims index(dims.size());
      for (int64_t flat = 0; flat < checked_numel(dims); ++flat) {
        int64_t rest = flat;
        for (size_t d = dims.size(); d-- > 0;) {
          index[d] = rest % dims[d];
          rest /= dims[d];
        }
        stored[format_offset(format, dims, index)] = static_cast<float>(flat);
      }
      std::unique_ptr<Kernel> k = cpu.create_kernel(info, "vec");
      KernelArgs args;
      args.inputs.push_back(TensorView{stored.data(), DType::Float32, dims});
      args.inputs.back().format = format;
      args.input_values.push_back(nullptr);
      args.outputs.push_back(TensorView{y.data(), DType::Float32, out_dims});
      args.pool = cpu.thread_pool();
      k->execute(args);
      // y in order is x permuted: output element j is x at the permuted multi-index.
      const std::vector<int64_t> strides = contiguous_strides(dims);
      Dims pidx(permuted.size());
      for (int64_t j = 0; j < checked_numel(permuted); ++j) {
        int64_t rest = j, src = 0;
        for (size_t d = permuted.size(); d-- > 0;) {
          pidx[d] = rest % permuted[d];
          rest /= permuted[d];
        }
        for (size_t d = 0; d < permuted.size(); ++d) src += pidx[d] * strides[c.perm.empty() ? d : c.perm[d]];
        ASSERT_EQ(y[j], static_cast<float>(src)) << what << " output element " << j;
      }
    }
    // Read Plain (the builder reformats first): a reshape before the permutation, and channels that leave a
    // padded block tail.
    ShuffleParams second;
    second.has_reshape = true;
    second.reshape = {2, 16, 15};
    second.second_perm = {0, 2, 1};
    Layer layer;
    layer.kind = LayerKind::Shuffle;
    layer.params = second;
    LayerInfo info;
    info.layer = &layer;
    info.inputs.push_back({"x", DType::Float32, dims, dims, dims, format});
    info.outputs.push_back({"y", DType::Float32, {2, 15, 16}, {2, 15, 16}, {2, 15, 16}});
    EXPECT_EQ(vec.formats_for(info).inputs, std::vector<TensorFormat>{TensorFormat::Plain})
        << tensor_format_name(format);
    if (format == TensorFormat::ChannelsLast) continue;
    const Dims padded = {2, 12, 3, 5};
    ShuffleParams permute;
    permute.first_perm = {0, 2, 3, 1};
    layer.params = permute;
    info.inputs[0] = {"x", DType::Float32, padded, padded, padded, format};
    info.outputs[0] = {"y", DType::Float32, {2, 3, 5, 12}, {2, 3, 5, 12}, {2, 3, 5, 12}};
    EXPECT_EQ(vec.formats_for(info).inputs, std::vector<TensorFormat>{TensorFormat::Plain})
        << tensor_format_name(format);
  }
}

}  // namespace
}  // namespace kiln::engine
