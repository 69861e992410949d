// The INT8 convolution tactic ("cudnn_int8", conv_graph.cpp) and INT8 tensors between layers on cuda
// (EngineCuda.*, label gpu through kiln_engine_gpu_tests; skipped without a GPU):
//   - the activation quantization to s8 rounds to nearest even and saturates, as the host does;
//   - a calibrated residual network of three convolutions builds every one INT8, keeps the tensors between
//     them s8 (never u8 on cuda: Backend::int8_unsigned), and stays within INT8's quantization noise of the
//     fp32 build, untimed and timed; a serialized plan runs bit for bit as built.
//
// Tolerance: each s8 tensor is off by at most half a step (amax / 254) per element and each weight by half of
// its channel's step; through three layers of 288-term sums (and fp16 between the layers, 2^-11 relative)
// that is a few tenths of a percent of the output range on average: above 26 dB SQNR against fp32 (the
// CPU's u8 tensors, twice as fine for these never-negative activations, get 30 dB in int8_test.cpp). Below
// 50 dB: quantized for real (fp16 alone stays above 60 dB here).

#if KILN_HAVE_CUDA

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/fp8_quantize.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/calibration.h"
#include "sqnr.h"

namespace kiln::engine {
namespace {
using namespace testing;
using kiln::testing::sqnr_db;

TEST(EngineCuda, Int8QuantizeRoundsToNearestEvenAndSaturates) {
  KILN_REQUIRE_GPU();
  std::vector<float> v;
  for (int i = -300; i <= 300; ++i) v.push_back(static_cast<float>(i) * 0.25f);  // ties at .5 included
  for (float x : {127.49f, 127.5f, 128.0f, -128.5f, -129.0f, 1e9f, -1e9f, INFINITY, -INFINITY, NAN}) v.push_back(x);
  while (v.size() % 8 != 0) v.push_back(0.5f);
  for (DType dtype : {DType::Float32, DType::Float16, DType::BFloat16}) {
    const HostTensor seen =
        HostTensor::from_floats(v, {static_cast<int64_t>(v.size())}).to(dtype).to(DType::Float32);
    for (size_t offset : {size_t{0}, size_t{1}}) {  // (the vector path, then the one-element path)
      HostTensor host(DType::Float32, {static_cast<int64_t>(v.size() + offset)});
      std::memcpy(host.mutable_data_as<float>() + offset, v.data(), v.size() * sizeof(float));
      const HostTensor typed = host.to(dtype);
      cuda::DeviceBuffer in(typed.data(), typed.nbytes()), out(v.size());
      cuda::launch_quantize_s8(static_cast<const uint8_t*>(in.data()) + offset * dtype_size(dtype),
                               cuda::dcode(dtype), static_cast<int64_t>(v.size()), 2.0f, out.as<int8_t>(), nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<int8_t> got(v.size());
      ASSERT_EQ(cudaMemcpy(got.data(), out.data(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      int bad = 0;
      for (size_t i = 0; i < v.size(); ++i) {
        const float x = seen.data_as<float>()[i] * 2.0f;
        const int want = std::isnan(x) ? 0 : static_cast<int>(std::fmax(-128.0f, std::fmin(127.0f, std::nearbyint(x))));
        if (got[i] != want && ++bad <= 5) {
          ADD_FAILURE() << dtype_name(dtype) << " offset " << offset << ": " << x << " gave " << int(got[i])
                        << ", want " << want;
        }
      }
    }
  }
}

// x -> conv a -> relu = r -> conv b -> relu -> conv c + r -> relu = y, 32 channels (cuDNN's INT8 engines take
// multiples of 4). conv a quantizes its floating input itself; r and conv b's output stay s8; conv c reads r
// as an s8 residual and writes the floating network output.
struct Int8ResidualNet {
  static constexpr int64_t n = 2, c = 32, h = 10, w = 12;
  HostTensor ka, kb, kc, ba, bb, bc;
  ConvolutionParams p;
  explicit Int8ResidualNet(std::mt19937& rng) {
    for (HostTensor* k : {&ka, &kb, &kc}) *k = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.15, 0.15);
    for (HostTensor* b : {&ba, &bb, &bc}) *b = random_tensor(DType::Float32, {c}, rng);
    p.pre_padding = p.post_padding = {1, 1};
  }
  void define(Network& net) const {
    Tensor* x = net.add_input("x", DType::Float32, {n, c, h, w});
    Tensor* r = net.add_activation("relu_a", net.add_convolution("conv_a", x, Weights("ka", ka), Weights("ba", ba), p),
                                   ActivationKind::Relu);
    Tensor* b = net.add_activation("relu_b", net.add_convolution("conv_b", r, Weights("kb", kb), Weights("bb", bb), p),
                                   ActivationKind::Relu);
    Tensor* y = net.add_convolution("conv_c", b, Weights("kc", kc), Weights("bc", bc), p);
    Tensor* out =
        net.add_activation("relu_c", net.add_elementwise("add", y, r, ElementwiseOp::Add), ActivationKind::Relu);
    out->set_name("y");
    net.mark_output(out);
  }
  static std::vector<std::map<std::string, HostTensor>> samples(std::mt19937& rng, int count) {
    std::vector<std::map<std::string, HostTensor>> out;
    for (int i = 0; i < count; ++i) out.push_back({{"x", random_tensor(DType::Float32, {n, c, h, w}, rng)}});
    return out;
  }
};

/// The untimed fp32 cuda build of `net`; then ranges from the max calibrator (no clipping: every error is a
/// rounding error) on 4 batches, and `config` set for an untimed fp16 + INT8 cuda build, first and last layers
/// included.
std::shared_ptr<Plan> build_fp32_and_calibrate(Network& net, std::mt19937& rng, BuilderConfig& config) {
  config.backend = "cuda";
  config.timing_iterations = 0;
  auto fp32 = build(net, config);
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  EXPECT_GE(set_dynamic_ranges(net, calibrate(net, config, Int8ResidualNet::samples(rng, 4), calibration)), 3);
  config.precisions = {Precision::FP32, Precision::FP16, Precision::INT8};
  config.int8_first_last = true;
  return fp32;
}

TEST(EngineCuda, Int8ResidualConvolutionsStayInt8AndMatchFp32WithinTheQuantizationStep) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(2101);
  Int8ResidualNet model(rng);
  Network net;
  model.define(net);
  BuilderConfig config;
  const auto fp32 = build_fp32_and_calibrate(net, rng, config);
  BuilderConfig timed = config;
  timed.timing_iterations = 10;
  for (const BuilderConfig& c : {config, timed}) {
    const std::string what = c.timing_iterations > 0 ? "timed" : "untimed";
    const auto plan = build(net, c);
    int int8_layers = 0;
    std::map<std::string, DType> written;
    for (const PlanLayerInfo& l : plan->layers()) {
      if (l.int8) {
        ++int8_layers;
        EXPECT_EQ(l.tactic, "cudnn_int8") << what << ": " << l.name;
      }
      if (!l.output_dtypes.empty()) written[l.name] = l.output_dtypes[0];
    }
    // (a timed build keeps a layer floating where INT8 is measured slower, as cuDNN's INT8 engines are at these
    // small shapes on an H100: there it chose fp16 for all three; its result must still be right)
    if (c.timing_iterations == 0) {
      EXPECT_EQ(int8_layers, 3) << what;
      EXPECT_EQ(written["conv_a"], DType::Int8) << "read by INT8 layers only, as input and residual: s8";
      EXPECT_EQ(written["conv_b"], DType::Int8) << "read by an INT8 layer only: s8";
    }
    const auto loaded = Plan::deserialize(plan->serialize());
    for (const auto& sample : Int8ResidualNet::samples(rng, 3)) {
      const HostTensor want = run(fp32, sample)[0], got = run(plan, sample)[0];
      const double db = sqnr_db(got, want);
      EXPECT_GT(db, 26.0) << what;
      if (int8_layers > 0) EXPECT_LT(db, 50.0) << what << ": quantized for real";
      const HostTensor again = run(loaded, sample)[0];
      ASSERT_EQ(got.nbytes(), again.nbytes());
      EXPECT_EQ(std::memcmp(got.data(), again.data(), got.nbytes()), 0) << what << ": a loaded plan runs as built";
    }
  }
}

// x -> relu = r (floating: not an INT8 layer's output) -> conv a + r -> relu -> conv b -> relu -> conv c: conv a
// writes s8 (read only by conv b) beside its fp16 residual r. Regression: the kernel took only residuals of the
// output's dtype or s8, so this layer, which its row accepted, failed the build when re-created.
TEST(EngineCuda, Int8OutputBesideAFloatingResidual) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(2103);
  Int8ResidualNet m(rng);
  using N = Int8ResidualNet;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {N::n, N::c, N::h, N::w});
  Tensor* r = net.add_activation("relu_x", x, ActivationKind::Relu);
  Tensor* a = net.add_convolution("conv_a", r, Weights("ka", m.ka), Weights("ba", m.ba), m.p);
  a = net.add_activation("relu_a", net.add_elementwise("add", a, r, ElementwiseOp::Add), ActivationKind::Relu);
  Tensor* b = net.add_activation(
      "relu_b", net.add_convolution("conv_b", a, Weights("kb", m.kb), Weights("bb", m.bb), m.p), ActivationKind::Relu);
  Tensor* y = net.add_convolution("conv_c", b, Weights("kc", m.kc), Weights("bc", m.bc), m.p);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  const auto fp32 = build_fp32_and_calibrate(net, rng, config);
  const auto plan = build(net, config);
  std::map<std::string, DType> written;
  int int8_layers = 0;
  for (const PlanLayerInfo& l : plan->layers()) {
    int8_layers += l.int8 ? 1 : 0;
    if (!l.output_dtypes.empty()) written[l.name] = l.output_dtypes[0];
  }
  EXPECT_EQ(int8_layers, 3);
  EXPECT_EQ(written["conv_a"], DType::Int8);
  for (const auto& sample : Int8ResidualNet::samples(rng, 2)) {
    const double db = sqnr_db(run(plan, sample)[0], run(fp32, sample)[0]);
    EXPECT_GT(db, 26.0);
    EXPECT_LT(db, 50.0);
  }
}

}  // namespace
}  // namespace kiln::engine

#endif
