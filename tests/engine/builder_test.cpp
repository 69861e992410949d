// Builder passes: fusions (structure and numbers), shuffle elimination, constant folding, dead layers,
// precision errors, timing cache, profile errors and the memory plan of a 20-layer residual chain.

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

const PlanLayerInfo* find_kind(const std::vector<PlanLayerInfo>& layers, LayerKind kind, int nth = 0) {
  for (const auto& l : layers) {
    if (l.kind == kind && nth-- == 0) return &l;
  }
  return nullptr;
}

TEST(EngineBuilder, FusesResidualBlockWithBatchNorm) {
  std::mt19937 rng(51);
  const int64_t c = 4, h = 6, w = 5;
  HostTensor k1 = random_tensor(DType::Float32, {c, c, 3, 3}, rng), k2 = random_tensor(DType::Float32, {c, c, 3, 3}, rng);
  HostTensor zero = HostTensor(DType::Float32, {c});
  HostTensor s1 = random_tensor(DType::Float32, {c, 1, 1}, rng, 0.5, 1.5), t1 = random_tensor(DType::Float32, {c, 1, 1}, rng);
  HostTensor s2 = random_tensor(DType::Float32, {c, 1, 1}, rng, 0.5, 1.5), t2 = random_tensor(DType::Float32, {c, 1, 1}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, c, h, w});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv1", x, k1, Weights(), p);
  y = net.add_elementwise("bn1_scale", y, net.add_constant("s1", s1), ElementwiseOp::Mul);
  y = net.add_elementwise("bn1_shift", y, net.add_constant("t1", t1), ElementwiseOp::Add);
  y = net.add_activation("relu1", y, ActivationKind::Relu);
  y = net.add_convolution("conv2", y, k2, Weights(), p);
  y = net.add_elementwise("bn2_scale", y, net.add_constant("s2", s2), ElementwiseOp::Mul);
  y = net.add_elementwise("bn2_shift", y, net.add_constant("t2", t2), ElementwiseOp::Add);
  y = net.add_elementwise("residual", y, x, ElementwiseOp::Add);
  y = net.add_activation("relu2", y, ActivationKind::Relu);
  net.mark_output(y);
  auto plan = build(net);
  auto layers = plan->layers();
  // Structure: exactly two convolutions; the first carries relu, the second sum + relu. Other layers may only
  // be reformats at the bindings (when the timed tactic is "onednn_blocked").
  EXPECT_EQ(count_kind(layers, LayerKind::Convolution), 2);
  ASSERT_EQ(layers.size() - count_kind(layers, LayerKind::Reformat), 2u) << "layers left after fusion";
  const PlanLayerInfo* conv1 = find_kind(layers, LayerKind::Convolution, 0);
  const PlanLayerInfo* conv2 = find_kind(layers, LayerKind::Convolution, 1);
  EXPECT_NE(conv1->detail.find("post_ops=[{kind=0;activation={kind=0"), std::string::npos) << conv1->detail;
  EXPECT_NE(conv2->detail.find("{kind=1;"), std::string::npos) << conv2->detail;
  EXPECT_EQ(conv2->inputs.size(), 2u);
  // Numbers against the unfused naive computation (fp32: 1e-4 relative, float accumulation order).
  HostTensor in = random_tensor(DType::Float32, {1, c, h, w}, rng);
  std::vector<double> xv = values(in);
  auto bn = [&](std::vector<double> v, const HostTensor& s, const HostTensor& t) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = v[i] * s.get_as_double(i / (h * w)) + t.get_as_double(i / (h * w));
    return v;
  };
  auto a = bn(conv3x3(xv, c, h, w, k1, zero), s1, t1);
  for (auto& v : a) v = std::max(v, 0.0);
  auto b = bn(conv3x3(a, c, h, w, k2, zero), s2, t2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::max(b[i] + xv[i], 0.0);
  expect_close(run(plan, {{"x", in}})[0], b, 1e-4, 1e-4, "fused residual block");
}

// An activation oneDNN cannot apply as a post-op (hard sigmoid: two different linear steps) stays a layer of its
// own: fused, the convolution could only run the reference kernel (mobilenet_v3's squeeze-excite convolutions
// ran 'ref' at 10-50x oneDNN's time). Numbers: 1e-5 (fp32, one 1x1 convolution of 8 terms).
TEST(EngineBuilder, ActivationsOneDnnCannotFuseStayLayers) {
  std::mt19937 rng(53);
  const int64_t c = 8;
  HostTensor k = random_tensor(DType::Float32, {c, c, 1, 1}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, c, 4, 4});
  Tensor* y = net.add_convolution("conv", x, k, Weights(), ConvolutionParams{});
  y = net.add_activation("hardsigmoid", y, ActivationKind::HardSigmoid, 1.0 / 6, 0.5);
  net.mark_output(y);
  auto plan = build(net);
  auto layers = plan->layers();
  const PlanLayerInfo* conv = find_kind(layers, LayerKind::Convolution);
  ASSERT_NE(conv, nullptr);
  EXPECT_NE(conv->tactic, "ref") << conv->detail;
  EXPECT_EQ(conv->detail.find("post_ops=[{"), std::string::npos) << conv->detail;
  HostTensor in = random_tensor(DType::Float32, {1, c, 4, 4}, rng);
  std::vector<double> xv = values(in), want(xv.size());
  for (int64_t o = 0; o < c; ++o) {
    for (int64_t p = 0; p < 16; ++p) {
      double acc = 0;
      for (int64_t i = 0; i < c; ++i) acc += k.get_as_double(o * c + i) * xv[i * 16 + p];
      want[o * 16 + p] = std::clamp(acc / 6 + 0.5, 0.0, 1.0);
    }
  }
  expect_close(run(plan, {{"x", in}})[0], want, 1e-5, 1e-5, "convolution then hard sigmoid");
}

TEST(EngineBuilder, FusesTransformerMlp) {
  std::mt19937 rng(52);
  const int64_t t = 5, d = 8, f = 16;
  HostTensor w1 = random_tensor(DType::Float32, {d, f}, rng), b1 = random_tensor(DType::Float32, {f}, rng);
  HostTensor w2 = random_tensor(DType::Float32, {f, d}, rng), b2 = random_tensor(DType::Float32, {d}, rng);
  HostTensor g = random_tensor(DType::Float32, {d}, rng, 0.5, 1.5), be = random_tensor(DType::Float32, {d}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {t, d});
  Tensor* h = net.add_matrix_multiply("fc1", x, false, net.add_constant("w1", Weights("fc1.weight", w1)), false);
  h = net.add_elementwise("fc1_bias", h, net.add_constant("b1", Weights("fc1.bias", b1)), ElementwiseOp::Add);
  h = net.add_activation("gelu", h, ActivationKind::GeluErf);
  h = net.add_matrix_multiply("fc2", h, false, net.add_constant("w2", w2), false);
  h = net.add_elementwise("fc2_bias", h, net.add_constant("b2", b2), ElementwiseOp::Add);
  h = net.add_elementwise("residual", h, x, ElementwiseOp::Add);
  NormalizationParams np;
  np.axis = 1;
  h = net.add_normalization("ln", h, np, g, be);
  net.mark_output(h);
  auto plan = build(net);
  auto layers = plan->layers();
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(count_kind(layers, LayerKind::MatrixMultiply), 2);
  EXPECT_NE(layers[0].detail.find("activation={kind=3"), std::string::npos) << layers[0].detail;  // gelu_erf
  EXPECT_NE(layers[1].detail.find("{kind=1;"), std::string::npos) << layers[1].detail;            // sum
  EXPECT_EQ(layers[2].kind, LayerKind::Normalization);
  HostTensor in = random_tensor(DType::Float32, {t, d}, rng);
  std::vector<double> want;
  for (int64_t r = 0; r < t; ++r) {
    std::vector<double> hid(f), o(d);
    for (int64_t j = 0; j < f; ++j) {
      double s = b1.get_as_double(j);
      for (int64_t k = 0; k < d; ++k) s += in.get_as_double(r * d + k) * w1.get_as_double(k * f + j);
      hid[j] = 0.5 * s * (1 + std::erf(s / std::sqrt(2.0)));
    }
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) {
      double s = b2.get_as_double(j) + in.get_as_double(r * d + j);
      for (int64_t k = 0; k < f; ++k) s += hid[k] * w2.get_as_double(k * d + j);
      o[j] = s;
      mean += s / d;
    }
    for (double v : o) var += (v - mean) * (v - mean) / d;
    for (int64_t j = 0; j < d; ++j) want.push_back((o[j] - mean) / std::sqrt(var + 1e-5) * g.get_as_double(j) + be.get_as_double(j));
  }
  expect_close(run(plan, {{"x", in}})[0], want, 1e-4, 1e-4, "fused mlp");
}

TEST(EngineBuilder, FusesPointwiseChain) {
  std::mt19937 rng(53);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {3, 8});
  Tensor* y = net.add_input("y", DType::Float32, {8});
  Tensor* a = net.add_elementwise("mul2", x, net.add_constant("two", HostTensor::from_floats({2.0f}, {1})), ElementwiseOp::Mul);
  a = net.add_elementwise("plus1", a, net.add_constant("one", HostTensor::from_floats({1.0f}, {1})), ElementwiseOp::Add);
  a = net.add_activation("sig", a, ActivationKind::Sigmoid);
  a = net.add_elementwise("times_y", a, y, ElementwiseOp::Mul);
  a = net.add_unary("exp", a, UnaryOp::Exp);
  net.mark_output(a);
  auto plan = build(net);
  auto layers = plan->layers();
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].kind, LayerKind::FusedPointwise);
  EXPECT_EQ(layers[0].inputs.size(), 2u);
  HostTensor xi = random_tensor(DType::Float32, {3, 8}, rng), yi = random_tensor(DType::Float32, {8}, rng);
  std::vector<double> want;
  for (int64_t i = 0; i < 24; ++i) want.push_back(std::exp(1 / (1 + std::exp(-(2 * xi.get_as_double(i) + 1))) * yi.get_as_double(i % 8)));
  expect_close(run(plan, {{"x", xi}, {"y", yi}})[0], want, 1e-5, 1e-6, "fused chain");
}

// A chain reading more constants than a fused program may (kMaxFusedPointwiseSources; erfinv's
// polynomial has ~20) is fused in parts: the CUDA backend refused the one fused layer it used to become.
TEST(EngineBuilder, LongPointwiseChainsAreFusedWithinTheSourceLimit) {
  std::mt19937 rng(55);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {4, 8});
  Tensor* a = x;
  const int kSteps = 20;
  for (int k = 0; k < kSteps; ++k) {
    Tensor* c = net.add_constant("c" + std::to_string(k), HostTensor::from_floats({0.25f * (k + 1)}, {1}));
    a = net.add_elementwise((k % 2 ? "mul" : "add") + std::to_string(k), a, c,
                            k % 2 ? ElementwiseOp::Mul : ElementwiseOp::Add);
  }
  net.mark_output(a);
  auto plan = build(net);
  auto layers = plan->layers();
  EXPECT_GE(count_kind(layers, LayerKind::FusedPointwise), 3);  // 20 weights, at most 8 per fused layer
  EXPECT_EQ(count_kind(layers, LayerKind::Elementwise) + count_kind(layers, LayerKind::FusedPointwise),
            static_cast<int>(layers.size()) - count_kind(layers, LayerKind::Constant));
  HostTensor xi = random_tensor(DType::Float32, {4, 8}, rng);
  std::vector<double> want;
  for (int64_t i = 0; i < 32; ++i) {
    double v = xi.get_as_double(i);
    for (int k = 0; k < kSteps; ++k) v = k % 2 ? v * (0.25 * (k + 1)) : v + 0.25 * (k + 1);
    want.push_back(v);
  }
  // 20 fp32 roundings of values up to ~1e9: 1e-5 relative.
  expect_close(run(plan, {{"x", xi}})[0], want, 1e-5, 1e-6, "chain in parts");
}

TEST(EngineBuilder, EliminatesShufflesFoldsConstantsRemovesDeadLayers) {
  std::mt19937 rng(54);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 3, 4});
  Tensor* t = net.add_shuffle("t1", x, ShuffleParams{{0, 2, 1}, false, {}, {}});
  t = net.add_shuffle("t2", t, ShuffleParams{{0, 2, 1}, false, {}, {}});
  t = net.add_shuffle("r1", t, ShuffleParams{{}, true, {6, 4}, {}});
  t = net.add_shuffle("r2", t, ShuffleParams{{}, true, {2, 3, 4}, {}});
  Tensor* c = net.add_elementwise("cc", net.add_constant("c1", HostTensor::from_floats({1, 2, 3, 4}, {4})),
                                  net.add_constant("c2", HostTensor::from_floats({4, 3, 2, 1}, {4})), ElementwiseOp::Mul);
  net.add_activation("dead", x, ActivationKind::Relu);  // never used
  Tensor* out = net.add_elementwise("out", t, c, ElementwiseOp::Sub);
  net.mark_output(out);
  auto plan = build(net);
  auto layers = plan->layers();
  EXPECT_EQ(count_kind(layers, LayerKind::Shuffle), 0);
  EXPECT_EQ(count_kind(layers, LayerKind::Activation), 0);
  ASSERT_EQ(layers.size(), 2u);  // the folded constant and the subtraction
  EXPECT_EQ(layers[0].kind, LayerKind::Constant);
  HostTensor xi = random_tensor(DType::Float32, {2, 3, 4}, rng);
  std::vector<double> want;
  const double cv[4] = {4, 6, 6, 4};
  for (int64_t i = 0; i < 24; ++i) want.push_back(xi.get_as_double(i) - cv[i % 4]);
  // One fp32 rounding of the subtraction: 1e-6 relative.
  expect_close(run(plan, {{"x", xi}})[0], want, 1e-6, 1e-7, "shuffles removed");
}

TEST(EngineBuilder, PrecisionAndProfileErrors) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float16, {2, 2});
  net.mark_output(net.add_activation("relu", x, ActivationKind::Relu));
  try {
    build(net);
    FAIL() << "fp16 tensor without FP16 precision must fail";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("fp16"), std::string::npos) << e.what();
  }
  BuilderConfig strong;
  strong.strongly_typed = true;
  EXPECT_NO_THROW(build(net, strong));

  Network dyn;
  Tensor* d = dyn.add_input("seq", DType::Float32, {-1, 4});
  dyn.mark_output(dyn.add_activation("relu", d, ActivationKind::Relu));
  EXPECT_THROW(build(dyn), kiln::Error);  // no profile for a dynamic input
  BuilderConfig config;
  OptimizationProfile p;
  p.set_dimensions("seq", {1, 4}, {4, 4}, {8, 4});
  config.profiles = {p};
  auto plan = build(dyn, config);
  ExecutionContext ctx(plan);
  try {
    ctx.set_input_shape("seq", {9, 4});
    FAIL() << "shape outside the profile must fail";
  } catch (const kiln::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("seq"), std::string::npos) << m;
    EXPECT_NE(m.find("dim 0"), std::string::npos) << m;
    EXPECT_NE(m.find("[1, 8]"), std::string::npos) << m;
  }
}

TEST(EngineBuilder, StronglyTypedHalfNetworks) {
  // fp16 and bf16 tensors declared by the network are kept as declared; compared to an fp32 reference on
  // the same (already rounded) inputs with rtol = atol = 1e-2 (one output rounding plus fp16 storage of
  // the intermediate).
  std::mt19937 rng(57);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    Network net;
    Tensor* x = net.add_input("x", dt, {4, 6});
    Tensor* y = net.add_softmax("sm", net.add_activation("gelu", x, ActivationKind::GeluTanh), 1);
    net.mark_output(y);
    BuilderConfig config;
    config.strongly_typed = true;
    auto plan = build(net, config);
    EXPECT_EQ(plan->binding(y->name()).dtype, dt);
    HostTensor in = random_tensor(DType::Float32, {4, 6}, rng, -2, 2).to(dt);
    std::vector<double> want;
    for (int r = 0; r < 4; ++r) {
      std::vector<double> g(6);
      double sum = 0;
      for (int j = 0; j < 6; ++j) {
        double v = in.get_as_double(r * 6 + j);
        g[j] = std::exp(0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
        sum += g[j];
      }
      for (double e : g) want.push_back(e / sum);
    }
    expect_close(run(plan, {{"x", in}})[0], want, 1e-2, 1e-2, dtype_name(dt));
  }
}

TEST(EngineBuilder, TimingCacheIsWrittenAndReused) {
  std::mt19937 rng(55);
  std::string path = ::testing::TempDir() + "/kiln_engine_timing_cache.txt";
  std::remove(path.c_str());
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, 8, 12, 12});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  net.mark_output(net.add_convolution("conv", x, random_tensor(DType::Float32, {8, 8, 3, 3}, rng), Weights(), p));
  BuilderConfig config;
  config.timing_cache_path = path;
  auto first = build(net, config);
  // Entry lines only: the file also holds a header line and an HMAC tag line (engine/core/timing_cache.h).
  std::ifstream in(path);
  std::string line;
  int entries = 0;
  while (std::getline(in, line)) entries += line.rfind("kiln-timing-cache", 0) != 0 && line.rfind("hmac-sha256\t", 0) != 0;
  auto second = build(net, config);
  EXPECT_EQ(first->layers()[0].tactic, second->layers()[0].tactic);
  // A single-candidate layer writes nothing; with several candidates there is one entry.
  EXPECT_LE(entries, 1);
}

TEST(EngineBuilder, MemoryPlanOfResidualChainIsTight) {
  std::mt19937 rng(56);
  const int64_t c = 8, hw = 16;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, c, hw, hw});
  Tensor* y = x;
  Tensor* skip = x;
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  for (int i = 0; i < 20; ++i) {
    y = net.add_convolution("conv" + std::to_string(i), y, random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2),
                            random_tensor(DType::Float32, {c}, rng), p);
    if (i % 2 == 1) {
      y = net.add_elementwise("add" + std::to_string(i), y, skip, ElementwiseOp::Add);
      skip = y;
    }
    y = net.add_activation("relu" + std::to_string(i), y, ActivationKind::Relu);
    if (i % 2 == 1) skip = y;
  }
  net.mark_output(y);
  auto plan = build(net);
  size_t arena = plan->arena_bytes(0), live = plan->live_bytes_lower_bound(0);
  std::printf("memory plan: 20-layer residual chain: arena %zu bytes, largest live set %zu bytes (%.2fx)\n", arena, live,
              static_cast<double>(arena) / static_cast<double>(live));
  EXPECT_GT(live, 0u);
  EXPECT_LE(arena, 2 * live);
  HostTensor in = random_tensor(DType::Float32, {1, c, hw, hw}, rng);
  auto out = run(plan, {{"x", in}});
  for (int64_t i = 0; i < out[0].numel(); ++i) ASSERT_GE(out[0].get_as_double(i), 0.0);
}

}  // namespace
}  // namespace kiln::engine
