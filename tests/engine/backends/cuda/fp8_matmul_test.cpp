// The FP8 matmul tactic ("cublaslt_fp8", matmul_fp8.h) on a GPU with FP8 tensor cores (EngineCuda.*, label
// gpu through kiln_engine_gpu_tests; skipped elsewhere):
//   - the activation quantization pass rounds as the host's ops::float_to_e4m3 does, bit for bit;
//   - linear layers (weight [K, N] or [N, K], bias, tanh-GELU epilogue, a residual in cuBLASLt's C) compute
//     the product of the E4M3-quantized operands, against a host reference of exactly that;
//   - a serialized FP8 plan runs bit for bit as built, and a plan with a dynamic batch runs every batch;
//   - a calibrated FP8 build of a two-layer MLP stays within FP8's quantization noise of the fp32 build;
//   - an FP8 layer's input is written as E4M3 by the fp16 matmul before it (no Reformat layer) when that is
//     its only reader, else quantized by a Reformat; both within FP8's noise of fp32;
//   - an FP8 matmul with a bias and an exact GELU writes the next FP8 layer's input from cuBLASLt itself,
//     saturating (no NaN) where the values pass the calibrated range.
//
// Tolerances: the reference multiplies the same E4M3 values in double and scales them as the kernel does;
// what remains is the tensor cores' accumulation (fast accumulation: partial sums kept in the tensor cores'
// reduced precision, not promoted to fp32) and the output's rounding to fp16 (2^-11 relative) or bf16 (2^-8),
// so rtol = atol = 2^-8 (fp16) / 2^-7 (bf16) (outputs are O(1)-O(10)). That is 8-16 times finer than E4M3's
// rounding step of the operands (2^-4 relative), so an unquantized product would not pass.
// E4M3 keeps 4 significant bits (relative step 2^-3, rounding error <= 2^-4): quantizing both operands of a
// 64-term product costs about 30 dB of SQNR, two such layers about 27 dB, hence the bound of 24 dB.

#if KILN_HAVE_CUDA

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/fp8_test_util.h"
#include "engine/backends/cuda/linalg/fp8_quantize.h"
#include "engine/backends/cuda/linalg/matmul_call.h"
#include "engine/core/plan_impl.h"
#include "engine/engine_test_util.h"
#include "engine/ops/fp8.h"
#include "kiln/engine/calibration.h"
#include "kiln/engine/tactic_stats.h"
#include "sqnr.h"

namespace kiln::engine {
namespace {
using namespace testing;
using kiln::testing::sqnr_db;
using ops::e4m3_to_float;
using ops::float_to_e4m3;

/// Runs the device quantization pass over `x` (as `dtype`, starting `offset` elements into the buffer, to
/// reach the one-element path) and returns its bytes.
std::vector<uint8_t> quantize_on_device(const std::vector<float>& x, DType dtype, size_t offset,
                                        float inverse) {
  HostTensor host(DType::Float32, {static_cast<int64_t>(x.size() + offset)});
  for (size_t i = 0; i < x.size(); ++i) host.mutable_data_as<float>()[offset + i] = x[i];
  const HostTensor typed = host.to(dtype);
  cuda::DeviceBuffer in(typed.data(), typed.nbytes()), out(x.size() + 1);
  const auto* start = static_cast<const uint8_t*>(in.data()) + offset * dtype_size(dtype);
  cuda::launch_quantize_e4m3(start, cuda::dcode(dtype), static_cast<int64_t>(x.size()), inverse,
                             out.as<uint8_t>(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> bytes(x.size());
  EXPECT_EQ(cudaMemcpy(bytes.data(), out.data(), bytes.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return bytes;
}

TEST(EngineCuda, Fp8QuantizeMatchesTheHostRounding) {
  KILN_REQUIRE_FP8_GPU();
  // Every code's value, points between neighbours (ties included), beyond the range, tiny, non-finite.
  std::vector<float> v;
  for (int code = 0; code < 0x7e; ++code) {
    const float lo = e4m3_to_float(static_cast<uint8_t>(code)),
                hi = e4m3_to_float(static_cast<uint8_t>(code + 1));
    for (float t : {0.0f, 0.25f, 0.5f, 0.75f}) {
      v.push_back(lo + t * (hi - lo));
      v.push_back(-(lo + t * (hi - lo)));
    }
  }
  for (float x : {448.0f, 470.0f, 1e6f, 1e-30f, INFINITY, -INFINITY, NAN}) v.push_back(x);
  while (v.size() % 8 != 0) v.push_back(0.5f);
  for (DType dtype : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (float inverse : {1.0f, 3.0f}) {
      // What the pass sees: the values in `dtype`.
      const HostTensor seen =
          HostTensor::from_floats(v, {static_cast<int64_t>(v.size())}).to(dtype).to(DType::Float32);
      for (size_t offset : {size_t{0}, size_t{1}}) {
        const std::vector<uint8_t> got = quantize_on_device(v, dtype, offset, inverse);
        int bad = 0;
        for (size_t i = 0; i < v.size(); ++i) {
          const float x = seen.data_as<float>()[i];
          const uint8_t want = float_to_e4m3(x * inverse);
          if (got[i] != want && ++bad <= 5) {
            ADD_FAILURE() << dtype_name(dtype) << " x" << inverse << " offset " << offset << ": " << x
                          << " gave 0x" << std::hex << int(got[i]) << ", want 0x" << int(want);
          }
        }
      }
    }
  }
}

/// One linear layer of an FP8 case: y = act(x W + bias) + r, W [K, N] (or [N, K] transposed).
struct Fp8Linear {
  bool transpose_b = false, bias = false, gelu = false, residual = false;
  Precision precision = Precision::FP16;
  std::string name() const {
    return std::string(transpose_b ? "W^T" : "W") + (bias ? "+bias" : "") + (gelu ? "+gelu_tanh" : "") +
           (residual ? "+residual" : "") + " " + precision_name(precision);
  }
};

constexpr int64_t kFp8Rows = 48, kFp8K = 64, kFp8N = 32;
// x's range: amax 28, so A's scale is 28 / 448 = 1/16 and x / scale = 16 x exactly (E4M3 then rounds the
// values above 16 in magnitude).
constexpr float kFp8Amax = 28.0f;

/// x W (+ bias) for x [..., K] and W [K, N], in double: with `quantized`, of x and W rounded to E4M3 (x with
/// the scale `a_scale`, W with its per-tensor scale) and scaled back, as the FP8 tactic computes it; without,
/// of the values themselves.
std::vector<double> fp8_linear_reference(const HostTensor& x, const HostTensor& w_kn, const HostTensor* bias,
                                         float a_scale, bool quantized) {
  const int64_t k_dim = w_kn.sizes()[0], n_dim = w_kn.sizes()[1], rows = x.numel() / k_dim;
  const ops::Fp8Weights wq =
      ops::quantize_e4m3(std::vector<float>(w_kn.data_as<float>(), w_kn.data_as<float>() + w_kn.numel()));
  std::vector<double> y(static_cast<size_t>(rows * n_dim));
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t n = 0; n < n_dim; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < k_dim; ++k) {
        const float xa = x.data_as<float>()[m * k_dim + k];
        acc += quantized ? static_cast<double>(e4m3_to_float(float_to_e4m3(xa * (1.0f / a_scale)))) *
                               e4m3_to_float(wq.values[static_cast<size_t>(k * n_dim + n)]) *
                               static_cast<double>(wq.scale * a_scale)
                         : static_cast<double>(xa) * w_kn.data_as<float>()[k * n_dim + n];
      }
      y[static_cast<size_t>(m * n_dim + n)] = acc + (bias ? bias->data_as<float>()[n] : 0.0f);
    }
  }
  return y;
}

TEST(EngineCuda, Fp8LinearLayersComputeTheQuantizedProduct) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2026);
  // Multiples of 1/16 in [-2, 2) and of 1/64 in [-0.5, 0.5): exact in fp16 and bf16, so the quantized
  // values do not depend on the build's floating type.
  const HostTensor x = random_grid_tensor(DType::Float32, {2, kFp8Rows / 2, kFp8K}, rng, -2.0, 2.0, 16);
  const HostTensor r = random_grid_tensor(DType::Float32, {2, kFp8Rows / 2, kFp8N}, rng, -1.0, 1.0, 16);
  const HostTensor w_kn = random_grid_tensor(DType::Float32, {kFp8K, kFp8N}, rng, -0.5, 0.5, 64);
  const HostTensor bias = random_grid_tensor(DType::Float32, {kFp8N}, rng, -1.0, 1.0, 16);
  HostTensor w_nk(DType::Float32, {kFp8N, kFp8K});
  for (int64_t k = 0; k < kFp8K; ++k) {
    for (int64_t n = 0; n < kFp8N; ++n)
      w_nk.mutable_data_as<float>()[n * kFp8K + k] = w_kn.data_as<float>()[k * kFp8N + n];
  }
  const float a_scale = kFp8Amax / ops::kE4m3Max;
  // `quantized` false: the product of the unquantized values (which the FP8 output must not match).
  auto reference = [&](const Fp8Linear& c, bool quantized = true) {
    std::vector<double> y = fp8_linear_reference(x, w_kn, c.bias ? &bias : nullptr, a_scale, quantized);
    for (size_t i = 0; i < y.size(); ++i) {
      double& v = y[i];
      if (c.gelu) v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      if (c.residual) v += r.data_as<float>()[i];
    }
    return y;
  };
  for (Precision p : {Precision::FP16, Precision::BF16}) {
    for (Fp8Linear c : {Fp8Linear{false, false, false, false, p}, Fp8Linear{true, true, false, false, p},
                        Fp8Linear{false, true, true, false, p}, Fp8Linear{true, true, false, true, p}}) {
      Network net;
      Tensor* in = net.add_input("x", DType::Float32, x.sizes());
      in->set_dynamic_range(-kFp8Amax, kFp8Amax);
      const HostTensor& w = c.transpose_b ? w_nk : w_kn;
      Tensor* y =
          net.add_matrix_multiply("mm", in, false, net.add_constant("w", Weights("w", w)), c.transpose_b);
      if (c.bias)
        y = net.add_elementwise("bias", y, net.add_constant("b", Weights("b", bias)), ElementwiseOp::Add);
      if (c.gelu) y = net.add_activation("gelu", y, ActivationKind::GeluTanh);
      if (c.residual)
        y = net.add_elementwise("residual", y, net.add_input("r", DType::Float32, r.sizes()),
                                ElementwiseOp::Add);
      y->set_name("y");
      net.mark_output(y);
      BuilderConfig config;
      config.backend = "cuda";
      config.precisions = {Precision::FP32, p, Precision::FP8};
      config.int8_first_last = true;  // the network's only matmul may quantize
      config.timing_iterations = 0;   // the first tactic that applies: FP8
      const auto plan = build(net, config);
      int fp8_layers = 0;
      for (const PlanLayerInfo& l : plan->layers()) {
        if (l.kind != LayerKind::MatrixMultiply) continue;
        EXPECT_TRUE(l.fp8) << c.name() << ": " << l.name << " runs " << l.tactic;
        EXPECT_EQ(l.tactic, "cublaslt_fp8") << c.name();
        fp8_layers += l.fp8 ? 1 : 0;
      }
      EXPECT_EQ(fp8_layers, 1) << c.name();
      std::map<std::string, HostTensor> feed = {{"x", x}};
      if (c.residual) feed["r"] = r;
      const double tol = p == Precision::FP16 ? 1.0 / 256 : 1.0 / 128;
      const std::vector<HostTensor> got = run(plan, feed);
      expect_close(got[0], reference(c), tol, tol, c.name());
      // ... and not the unquantized product: somewhere it differs by several tolerances.
      const std::vector<double> exact = reference(c, false);
      double furthest = 0;
      for (size_t i = 0; i < exact.size(); ++i) {
        furthest = std::max(furthest, std::fabs(got[0].get_as_double(static_cast<int64_t>(i)) - exact[i]));
      }
      EXPECT_GT(furthest, 4 * tol) << c.name() << ": the output is the unquantized product";
      // The plan again after serialization: the same bits.
      const std::vector<HostTensor> again = run(Plan::deserialize(plan->serialize()), feed);
      ASSERT_EQ(again[0].nbytes(), got[0].nbytes());
      EXPECT_EQ(std::memcmp(again[0].data(), got[0].data(), got[0].nbytes()), 0)
          << c.name() << ": loaded plan differs";
    }
  }
}

// A dynamic batch: the quantizing Reformat and the GEMM follow the run's dims (one plan, batches 1 to 4, over
// two profiles).
TEST(EngineCuda, Fp8LinearLayerWithADynamicBatch) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2028);
  const HostTensor w = random_grid_tensor(DType::Float32, {kFp8K, kFp8N}, rng, -0.5, 0.5, 64);
  const HostTensor bias = random_grid_tensor(DType::Float32, {kFp8N}, rng, -1.0, 1.0, 16);
  Network net;
  Tensor* in = net.add_input("x", DType::Float32, {-1, 24, kFp8K});
  in->set_dynamic_range(-kFp8Amax, kFp8Amax);
  Tensor* y = net.add_matrix_multiply("mm", in, false, net.add_constant("w", Weights("w", w)), false);
  y = net.add_elementwise("bias", y, net.add_constant("b", Weights("b", bias)), ElementwiseOp::Add);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.backend = "cuda";
  config.precisions = {Precision::FP32, Precision::FP16, Precision::FP8};
  config.int8_first_last = true;
  config.timing_iterations = 0;
  OptimizationProfile small, large;
  small.set_dimensions("x", {1, 24, kFp8K}, {2, 24, kFp8K}, {2, 24, kFp8K});
  large.set_dimensions("x", {1, 24, kFp8K}, {4, 24, kFp8K}, {4, 24, kFp8K});
  config.profiles = {small, large};
  const auto plan = build(net, config);
  for (const PlanLayerInfo& l : plan->layers()) {
    if (l.kind == LayerKind::MatrixMultiply) EXPECT_EQ(l.tactic, "cublaslt_fp8");
  }
  for (int64_t batch : {1, 3, 4, 2}) {
    const HostTensor x = random_grid_tensor(DType::Float32, {batch, 24, kFp8K}, rng, -2.0, 2.0, 16);
    const std::vector<HostTensor> got = run(plan, {{"x", x}}, batch > 2 ? 1 : 0);
    expect_close(got[0], fp8_linear_reference(x, w, &bias, kFp8Amax / ops::kE4m3Max, true), 1.0 / 256,
                 1.0 / 256, "batch " + std::to_string(batch));
  }
}

TEST(EngineCuda, Fp8CalibratedMlpStaysWithinQuantizationNoiseOfFp32) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2027);
  const HostTensor w1 = random_tensor(DType::Float32, {64, 96}, rng, -0.25, 0.25);
  const HostTensor b1 = random_tensor(DType::Float32, {96}, rng);
  const HostTensor w2 = random_tensor(DType::Float32, {32, 96}, rng, -0.25, 0.25);
  Network net;
  add_two_layer_mlp(net, {4, 16, 64}, w1, b1, w2, ActivationKind::GeluTanh);
  BuilderConfig config;
  config.backend = "cuda";
  config.timing_iterations = 0;
  auto data = [&](int n) {
    std::vector<std::map<std::string, HostTensor>> out;
    for (int i = 0; i < n; ++i) out.push_back({{"x", random_tensor(DType::Float32, {4, 16, 64}, rng)}});
    return out;
  };
  const auto fp32 = build(net, config);
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  EXPECT_GE(set_dynamic_ranges(net, calibrate(net, config, data(4), calibration)), 2);
  config.precisions = {Precision::FP32, Precision::FP16, Precision::FP8};
  config.int8_first_last = true;
  const auto fp8 = build(net, config);
  int fp8_layers = 0;
  for (const PlanLayerInfo& l : fp8->layers()) fp8_layers += l.fp8 ? 1 : 0;
  EXPECT_EQ(fp8_layers, 2);
  for (const auto& sample : data(3)) {
    const double db = sqnr_db(run(fp8, sample)[0], run(fp32, sample)[0]);
    EXPECT_GT(db, 24.0);
    // Quantized for real: fp16 alone would be above 50 dB.
    EXPECT_LT(db, 45.0);
  }
}

// x -> mm1 (fp16: the first layer) + bias, exact GELU -> mm2 (FP8) [+ h] -> mm3 (fp16: the last layer). mm1's
// output h is mm2's A: mm1 writes it as E4M3 itself (TensorFormat::E4M3, its GELU pass storing the codes)
// when mm2 is its only reader; when mm2 also adds h as a residual (Plain), a Reformat quantizes a copy.
// With `fp8_pair`, mm2 + bias, exact GELU -> mm2b (FP8) before mm3: mm2 writes mm2b's input as E4M3 from
// cuBLASLt's epilogue.
struct ThreeLinearLayers {
  HostTensor w1, b1, w2, w2b, w3;
  explicit ThreeLinearLayers(std::mt19937& rng)
      : w1(random_tensor(DType::Float32, {64, 96}, rng, -0.25, 0.25)),
        b1(random_tensor(DType::Float32, {96}, rng)),
        w2(random_tensor(DType::Float32, {96, 96}, rng, -0.2, 0.2)),
        w2b(random_tensor(DType::Float32, {96, 96}, rng, -0.2, 0.2)),
        w3(random_tensor(DType::Float32, {96, 32}, rng, -0.2, 0.2)) {}
  /// The network for x of `x_dims` ([batch, 16, 64]; batch -1 for a dynamic one).
  void add_to(Network& net, const Dims& x_dims, bool residual, bool fp8_pair = false) const {
    Tensor* x = net.add_input("x", DType::Float32, x_dims);
    Tensor* h = net.add_matrix_multiply("mm1", x, false, net.add_constant("w1", Weights("w1", w1)), false);
    h = net.add_elementwise("bias", h, net.add_constant("b1", Weights("b1", b1)), ElementwiseOp::Add);
    h = net.add_activation("gelu", h, ActivationKind::GeluErf);
    h->set_name("h");
    Tensor* g = net.add_matrix_multiply("mm2", h, false, net.add_constant("w2", Weights("w2", w2)), false);
    if (residual) g = net.add_elementwise("residual", g, h, ElementwiseOp::Add);
    if (fp8_pair) {
      g = net.add_elementwise("bias2", g, net.add_constant("b2", Weights("b2", b1)), ElementwiseOp::Add);
      g = net.add_activation("gelu2", g, ActivationKind::GeluErf);
      g->set_name("g");
      g = net.add_matrix_multiply("mm2b", g, false, net.add_constant("w2b", Weights("w2b", w2b)), false);
    }
    Tensor* y = net.add_matrix_multiply("mm3", g, false, net.add_constant("w3", Weights("w3", w3)), false);
    y->set_name("y");
    net.mark_output(y);
  }
  /// `n` feeds of x with batch `batch`.
  static std::vector<std::map<std::string, HostTensor>> samples(std::mt19937& rng, int n, int64_t batch,
                                                                double amax = 1.0) {
    std::vector<std::map<std::string, HostTensor>> out;
    for (int i = 0; i < n; ++i) {
      out.push_back({{"x", random_tensor(DType::Float32, {batch, 16, 64}, rng, -amax, amax)}});
    }
    return out;
  }
  /// Calibrates `net` (max calibrator, ranges set on the network) on four batches of `batch` and lets
  /// `config` build FP8 (fp16 beside it).
  static void calibrate_for_fp8(Network& net, BuilderConfig& config, std::mt19937& rng, int64_t batch,
                                const std::string& what) {
    CalibrationConfig calibration;
    calibration.calibrator = CalibratorKind::Max;
    const auto calibration_data = samples(rng, 4, batch);
    EXPECT_GE(set_dynamic_ranges(net, calibrate(net, config, calibration_data, calibration)), 2) << what;
    config.precisions = {Precision::FP32, Precision::FP16, Precision::FP8};
  }
  /// Checks that mm2 alone runs FP8 and that mm1 writes h as E4M3 (no Reformat) or not (one quantizing
  /// Reformat).
  static void expect_fp8_mm2(const Plan& plan, bool written, const std::string& what) {
    int reformats = 0;
    for (const PlanLayerInfo& l : plan.layers()) {
      if (l.kind == LayerKind::Reformat) {
        ++reformats;
        EXPECT_EQ(l.tactic, "quantize_e4m3") << what;
      }
      if (l.name == "mm2") EXPECT_TRUE(l.fp8) << what << ": mm2 runs " << l.tactic;
      if (l.name == "mm1" || l.name == "mm3") EXPECT_FALSE(l.fp8) << what << ": " << l.name;
      if (l.name == "mm1") {
        ASSERT_EQ(l.output_formats.size(), 1u);
        EXPECT_EQ(l.output_formats[0], written ? TensorFormat::E4M3 : TensorFormat::Plain) << what;
      }
    }
    EXPECT_EQ(reformats, written ? 0 : 1) << what;
  }
};

/// One FP8 layer of 96 terms: about 30 dB of SQNR against fp32 (see the file comment); fp16 alone would be
/// above 50.
void expect_fp8_noise(const HostTensor& fp8, const HostTensor& fp32, const std::string& what) {
  const double db = sqnr_db(fp8, fp32);
  EXPECT_GT(db, 24.0) << what;
  EXPECT_LT(db, 45.0) << what;
}

TEST(EngineCuda, Fp8InputWrittenAsE4m3ByTheLayerBefore) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2029);
  const ThreeLinearLayers layers(rng);
  for (bool residual : {false, true}) {
    const std::string what = residual ? "h read twice" : "h read once";
    Network net;
    layers.add_to(net, {4, 16, 64}, residual);
    BuilderConfig config;
    config.backend = "cuda";
    config.timing_iterations = 0;  // the first tactic that applies: FP8 where allowed
    const auto fp32 = build(net, config);
    ThreeLinearLayers::calibrate_for_fp8(net, config, rng, 4, what);
    const auto fp8 = build(net, config);
    ThreeLinearLayers::expect_fp8_mm2(*fp8, !residual, what);
    // Timed, every candidate builds and runs: FP8 with the quantizing Reformat in front of it or without (its
    // input written as E4M3); which one wins is the timing's business.
    BuilderConfig timed = config;
    timed.timing_iterations = 2;
    const auto timed_plan = build(net, timed);
    EXPECT_GE(tactic_stats(*timed_plan).timed, 1) << what;  // (mm2: FP8 against fp16)
    EXPECT_EQ(tactic_stats(*timed_plan).failed, 0) << what;
    const auto loaded = Plan::deserialize(fp8->serialize());
    for (const auto& sample : ThreeLinearLayers::samples(rng, 3, 4)) {
      const HostTensor got = run(fp8, sample)[0];
      expect_fp8_noise(got, run(fp32, sample)[0], what);
      const HostTensor again = run(loaded, sample)[0];
      EXPECT_EQ(std::memcmp(again.data(), got.data(), got.nbytes()), 0) << what << ": loaded plan differs";
    }
  }
}

// Where cuBLASLt's epilogue takes all of an FP8 matmul's post-ops (the bias and an exact GELU, as its tanh
// form), it writes the next FP8 layer's input as E4M3 itself: mm2 -> mm2b with no Reformat (nor anywhere
// else: mm1 writes mm2's input through its GELU pass), within the noise of two FP8 layers, a loaded plan bit
// for bit. Inputs 8 times the calibrated range drive mm2's outputs past E4M3's 448: cuBLASLt saturates them
// as Kiln's own kernels do (a NaN would spread to y). Plan data of compute mode 2 (what plans of format 8
// hold for an FP8 matmul that staged its E4M3 output) makes mm2 stage it again, with its exact GELU. A timed
// build (FP8 against fp16 for each layer: which wins is the timing's business) has no failed candidate and
// rejects no plan data (the builder has mm2 time itself again once it writes E4M3), and mm2 writes E4M3
// wherever mm2b runs FP8, then with compute mode 3 in its plan data.
TEST(EngineCuda, Fp8MatmulWritesTheNextFp8LayersInputFromItsEpilogue) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2031);
  const ThreeLinearLayers layers(rng);
  Network net;
  layers.add_to(net, {4, 16, 64}, false, true);
  BuilderConfig config;
  config.backend = "cuda";
  config.timing_iterations = 0;
  const auto fp32 = build(net, config);
  ThreeLinearLayers::calibrate_for_fp8(net, config, rng, 4, "fp8 pair");
  // mm2's output format and whether mm2b runs FP8; the number of Reformat layers.
  struct Layout {
    TensorFormat mm2_writes = TensorFormat::Plain;
    bool mm2b_fp8 = false;
    int reformats = 0;
  };
  auto layout = [](const Plan& plan) {
    Layout l;
    for (const PlanLayerInfo& info : plan.layers()) {
      l.reformats += info.kind == LayerKind::Reformat;
      if (info.name == "mm2" && info.output_formats.size() == 1) l.mm2_writes = info.output_formats[0];
      if (info.name == "mm2b") l.mm2b_fp8 = info.fp8;
    }
    return l;
  };
  // Within the noise, saturating; with `reload`, a serialized copy runs bit for bit as the plan does. (A timed
  // build may keep every layer fp16 where FP8 did not time faster: then there is no FP8 noise to bound.)
  auto expect_runs = [&](const std::shared_ptr<Plan>& plan, const std::string& what, bool reload = true) {
    const auto loaded = reload ? Plan::deserialize(plan->serialize()) : plan;
    bool any_fp8 = false;
    for (const PlanLayerInfo& l : plan->layers()) any_fp8 = any_fp8 || l.fp8;
    for (const auto& sample : ThreeLinearLayers::samples(rng, 2, 4)) {
      const HostTensor got = run(plan, sample)[0];
      const double db = sqnr_db(got, run(fp32, sample)[0]);
      EXPECT_GT(db, 20.0) << what;  // (three quantized products: about 25 dB)
      if (any_fp8) EXPECT_LT(db, 45.0) << what;
      const HostTensor again = run(loaded, sample)[0];
      EXPECT_EQ(std::memcmp(again.data(), got.data(), got.nbytes()), 0) << what << ": loaded plan differs";
    }
    const HostTensor saturated =
        run(plan, ThreeLinearLayers::samples(rng, 1, 4, 8.0)[0])[0].to(DType::Float32);
    for (int64_t i = 0; i < saturated.numel(); ++i) {
      ASSERT_TRUE(std::isfinite(saturated.data_as<float>()[i])) << what << ": y[" << i << "]";
    }
  };

  const auto plan = build(net, config);
  const Layout untimed = layout(*plan);
  EXPECT_EQ(untimed.mm2_writes, TensorFormat::E4M3);
  EXPECT_TRUE(untimed.mm2b_fp8);
  EXPECT_EQ(untimed.reformats, 0);
  expect_runs(plan, "untimed");

  auto index_of = [](const Plan& p, const std::string& name) {
    for (size_t i = 0; i < p.impl().layers.size(); ++i) {
      if (p.impl().layers[i].layer.name == name) return i;
    }
    ADD_FAILURE() << "no layer " << name;
    return size_t{0};
  };
  const size_t mm2 = index_of(*plan, "mm2");
  const size_t direct_workspace = plan->impl().kernels[mm2]->workspace_size();
  cuda::MatmulPlanData
      staged;  // a format-8 plan's record of mm2: compute mode 2 (its algorithm is not usable)
  staged.call = cuda::MatmulCallKey{64, 96, 96, 1, 0, 0, 256};
  staged.dtype = static_cast<int64_t>(DType::Float16);
  staged.compute = 2;
  staged.transpose_b = 1;
  plan->impl().layers[mm2].kernel_data = cuda::encode_matmul_plan_data(staged);
  ASSERT_NO_THROW(plan->impl().create_kernels(static_cast<int64_t>(mm2)));
  EXPECT_GT(plan->impl().kernels[mm2]->workspace_size(), direct_workspace);  // (the staging)
  // (Not reloaded: the forged algorithm was refused, so the kernel records no plan data of its own.)
  expect_runs(plan, "staged as plan data says", false);

  BuilderConfig timed = config;
  timed.timing_iterations = 2;
  const cuda::MatmulTuningStats before = cuda::matmul_tuning_stats();
  const auto timed_plan = build(net, timed);
  EXPECT_EQ(cuda::matmul_tuning_stats().rejected, before.rejected);
  EXPECT_EQ(tactic_stats(*timed_plan).failed, 0);
  const Layout chosen = layout(*timed_plan);
  if (chosen.mm2b_fp8) {
    EXPECT_EQ(chosen.mm2_writes, TensorFormat::E4M3);
    cuda::MatmulPlanData d;
    std::string why;
    const size_t timed_mm2 = index_of(*timed_plan, "mm2");
    if (timed_plan->layers()[timed_mm2].fp8) {
      ASSERT_TRUE(cuda::decode_matmul_plan_data(timed_plan->impl().layers[timed_mm2].kernel_data, &d, &why))
          << why;
      EXPECT_EQ(d.compute, 3);
    }
  }
  expect_runs(timed_plan, "timed");
}

// Kernels are made for profile 0's shapes, and a matmul writing E4M3 stages its result in a workspace sized
// by them: with a dynamic batch, mm1 writes h as E4M3 only when profile 0 holds the largest h; otherwise a
// Reformat quantizes it. Both run every batch of both profiles.
TEST(EngineCuda, Fp8InputWrittenAsE4m3OnlyWhereProfileZeroIsTheLargest) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2030);
  const ThreeLinearLayers layers(rng);
  OptimizationProfile small, large;
  small.set_dimensions("x", {1, 16, 64}, {2, 16, 64}, {2, 16, 64});
  large.set_dimensions("x", {1, 16, 64}, {4, 16, 64}, {4, 16, 64});
  for (bool large_first : {true, false}) {
    const std::string what = large_first ? "profile 0 the largest" : "profile 1 the largest";
    Network net;
    layers.add_to(net, {-1, 16, 64}, false);
    BuilderConfig config;
    config.backend = "cuda";
    config.timing_iterations = 0;
    config.profiles = large_first ? std::vector<OptimizationProfile>{large, small}
                                  : std::vector<OptimizationProfile>{small, large};
    const auto fp32 = build(net, config);
    ThreeLinearLayers::calibrate_for_fp8(net, config, rng, 2, what);
    const auto fp8 = build(net, config);
    ThreeLinearLayers::expect_fp8_mm2(*fp8, large_first, what);
    for (int64_t batch : {4, 1, 3, 2}) {
      const int large_profile = large_first ? 0 : 1;
      const int profile = batch > 2 ? large_profile : 1 - large_profile;
      const auto sample = ThreeLinearLayers::samples(rng, 1, batch)[0];
      expect_fp8_noise(run(fp8, sample, profile)[0], run(fp32, sample, profile)[0],
                       what + ", batch " + std::to_string(batch));
    }
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
