// The cuda matmul tactics' call geometry and tuned cuBLASLt algorithms (matmul_call.h). On every machine with
// the CUDA toolkit: how shapes become cuBLASLt calls and the plan data format with hostile bytes. With a GPU
// (EngineCuda.*, label gpu through kiln_engine_gpu_tests): tuned matmuls against the cpu backend, a plan that
// runs its stored algorithms after loading (bit for bit as built), and plan data that is corrupt, foreign or
// missing falling back to the heuristic without failing.
//
// Tolerances vs the cpu backend (fp32): fp32 rtol = atol = 1e-4 (accumulation order differs; with TF32
// allowed too, since the inputs below are exact in TF32's 11 significant bits). fp16/bf16 inputs, weights and
// biases are multiples of 1/16 in [-1, 1), exact in both types, whose products and sums of 64 terms are exact
// in fp32 accumulation: only the output's rounding (<= 2^-9 relative in bf16) and the GELU formula's float
// evaluation remain, so rtol = atol = 1e-2.

#if KILN_HAVE_CUDA

#include <cstring>

#include "engine/backends/cuda/linalg/matmul_call.h"
#include "engine/core/plan_impl.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;
using cuda::MatmulCallKey;
using cuda::MatmulCalls;
using cuda::MatmulPlanData;

// ---- Call geometry and plan data (no GPU needed) ----

MatmulCalls calls(const Dims& a, const Dims& b, const Dims& y, bool ta = false, bool tb = false) {
  MatrixMultiplyParams p;
  p.transpose_a = ta;
  p.transpose_b = tb;
  return cuda::matmul_calls(p, a, b, y);
}

TEST(EngineCublasLtCalls, ShapesBecomeCalls) {
  // A batch of rows against one weight (a linear layer): one call over all rows.
  MatmulCalls c = calls({2, 3, 4, 8}, {8, 5}, {2, 3, 4, 5});
  EXPECT_FALSE(c.per_matrix);
  EXPECT_EQ(c.call, (MatmulCallKey{24, 5, 8, 1, 0, 0, 0}));
  EXPECT_EQ(c.batches, 6);
  EXPECT_EQ(c.m, 4);
  // A broadcast b batch of 1 is the same.
  EXPECT_EQ(calls({6, 4, 8}, {1, 8, 5}, {6, 4, 5}).call, (MatmulCallKey{24, 5, 8, 1, 0, 0, 0}));
  // Transposed b: still flattened; n from b's rows.
  EXPECT_EQ(calls({6, 4, 8}, {5, 8}, {6, 4, 5}, false, true).call, (MatmulCallKey{24, 5, 8, 1, 0, 0, 0}));
  // Transposed a cannot be flattened: a strided batch with b's stride 0.
  EXPECT_EQ(calls({6, 8, 4}, {8, 5}, {6, 4, 5}, true).call, (MatmulCallKey{4, 5, 8, 6, 32, 0, 0}));
  // Both batched: strided batch.
  EXPECT_EQ(calls({6, 4, 8}, {6, 8, 5}, {6, 4, 5}).call, (MatmulCallKey{4, 5, 8, 6, 32, 40, 0}));
  // a broadcast over b's batch.
  EXPECT_EQ(calls({4, 8}, {2, 3, 8, 5}, {2, 3, 4, 5}).call, (MatmulCallKey{4, 5, 8, 6, 0, 40, 0}));
  // One matrix: no batch, no strides.
  EXPECT_EQ(calls({1, 4, 8}, {8, 5}, {1, 4, 5}).call, (MatmulCallKey{4, 5, 8, 1, 0, 0, 0}));
  EXPECT_EQ(calls({4, 8}, {8, 5}, {4, 5}).call, (MatmulCallKey{4, 5, 8, 1, 0, 0, 0}));
  // Broadcast in both operands' batch dims: no constant stride, one call per output matrix.
  c = calls({2, 1, 4, 8}, {1, 3, 8, 5}, {2, 3, 4, 5});
  EXPECT_TRUE(c.per_matrix);
  EXPECT_EQ(c.call, (MatmulCallKey{4, 5, 8, 1, 0, 0, 0}));
  EXPECT_EQ(c.offset_a, (std::vector<int64_t>{0, 0, 0, 32, 32, 32}));
  EXPECT_EQ(c.offset_b, (std::vector<int64_t>{0, 40, 80, 0, 40, 80}));
}

TEST(EngineCublasLtCalls, PointerAlignment) {
  EXPECT_EQ(cuda::pointer_alignment(0), 256);
  EXPECT_EQ(cuda::pointer_alignment(0x300), 256);
  EXPECT_EQ(cuda::pointer_alignment(0x1080), 128);
  EXPECT_EQ(cuda::pointer_alignment(0x1008), 8);
  EXPECT_EQ(cuda::pointer_alignment(0x1002), 2);
  EXPECT_EQ(cuda::pointer_alignment(0x1001), 1);
}

MatmulPlanData sample_plan_data() {
  MatmulPlanData d;
  d.call = MatmulCallKey{4, 5, 8, 6, 32, 40, 256};
  d.dtype = static_cast<int64_t>(DType::BFloat16);
  d.compute = 0;
  d.transpose_a = 0;
  d.transpose_b = 1;
  d.epilogue = 36;
  for (size_t i = 0; i < d.algo.size(); ++i) d.algo[i] = 0x0123456789abcdefull * (i + 1);
  return d;
}

TEST(EngineCublasLtCalls, PlanDataRoundTrip) {
  MatmulPlanData d = sample_plan_data();
  std::vector<uint8_t> bytes = cuda::encode_matmul_plan_data(d);
  EXPECT_EQ(bytes.size(), 8u + 20u * 8u);
  MatmulPlanData back;
  std::string why;
  ASSERT_TRUE(cuda::decode_matmul_plan_data(bytes, &back, &why)) << why;
  EXPECT_EQ(back, d);
  // Every compute mode: 0 exact, 1 tf32, 2 fp8, 3 fp8 writing e4m3 from cuBLASLt.
  for (int64_t compute = 0; compute <= 3; ++compute) {
    MatmulPlanData c = d;
    c.compute = compute;
    ASSERT_TRUE(cuda::decode_matmul_plan_data(cuda::encode_matmul_plan_data(c), &back, &why))
        << compute << why;
    EXPECT_EQ(back, c);
  }
  // Little-endian and fixed: the version follows the magic.
  EXPECT_EQ(std::memcmp(bytes.data(), "KLMM", 4), 0);
  EXPECT_EQ(bytes[4], cuda::kMatmulPlanDataVersion);
}

TEST(EngineCublasLtCalls, PlanDataRejectsHostileBytes) {
  const std::vector<uint8_t> good = cuda::encode_matmul_plan_data(sample_plan_data());
  MatmulPlanData out;
  auto rejected = [&](const std::vector<uint8_t>& b, const std::string& what) {
    std::string why;
    EXPECT_FALSE(cuda::decode_matmul_plan_data(b, &out, &why)) << what;
    EXPECT_FALSE(why.empty()) << what;
  };
  for (size_t cut : {size_t{0}, size_t{3}, size_t{7}, size_t{8}, size_t{60}, good.size() - 1}) {
    rejected(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)),
             "cut at " + std::to_string(cut));
  }
  std::vector<uint8_t> b = good;
  b.push_back(0);
  rejected(b, "trailing byte");
  b = good;
  b[0] = 'X';
  rejected(b, "magic");
  b = good;
  b[4] = static_cast<uint8_t>(cuda::kMatmulPlanDataVersion + 1);
  rejected(b, "version");
  // Field i (0-based) of the 20 u64 after magic and version starts at byte 8 + 8 i.
  auto with_field = [&](size_t field, uint64_t v) {
    std::vector<uint8_t> r = good;
    for (int i = 0; i < 8; ++i) r[8 + 8 * field + i] = static_cast<uint8_t>(v >> (8 * i));
    return r;
  };
  rejected(with_field(0, 0), "m = 0");
  rejected(with_field(2, ~uint64_t{0}), "k < 0");
  rejected(with_field(3, 0), "count = 0");
  rejected(with_field(6, 3), "alignment 3");
  rejected(with_field(6, 512), "alignment 512");
  rejected(with_field(8, 4), "compute mode 4 (0 exact, 1 tf32, 2 fp8, 3 fp8 to e4m3)");
  rejected(with_field(8, ~uint64_t{0}), "compute mode -1");
  rejected(with_field(10, 7), "transpose flag 7");
  std::vector<uint8_t> single = cuda::encode_matmul_plan_data([] {
    MatmulPlanData d = sample_plan_data();
    d.call.count = 1;
    return d;
  }());
  rejected(single, "strides with one matrix");
  // The algorithm itself is opaque: any bits decode (cuBLASLt judges them when the kernel is created).
  std::string why;
  EXPECT_TRUE(cuda::decode_matmul_plan_data(with_field(12, ~uint64_t{0}), &out, &why)) << why;
}

// ---- On a GPU ----

/// Values exact in fp16 and bf16 (see the file comment).
HostTensor grid(const Dims& d, std::mt19937& rng) {
  return random_grid_tensor(DType::Float32, d, rng, -1.0, 1.0, 16);
}

enum class Epilogue { None, Bias, BiasRelu, BiasGelu, Relu, BiasGeluErf };
const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::None: return "none";
    case Epilogue::Bias: return "bias";
    case Epilogue::BiasRelu: return "bias+relu";
    case Epilogue::BiasGelu: return "bias+gelu_tanh";
    case Epilogue::Relu: return "relu";
    case Epilogue::BiasGeluErf: return "bias+gelu_erf";
  }
  return "?";
}

/// y = act(x @ w + bias) with w [k, n] a constant (a linear layer: bias and activation fuse into the matmul).
std::function<void(Network&)> linear(const Dims& x_dims, const HostTensor& w, const HostTensor& bias,
                                     Epilogue e) {
  return [=](Network& net) {
    Tensor* x = net.add_input("x", DType::Float32, x_dims);
    Tensor* y = net.add_matrix_multiply("mm", x, false, net.add_constant("w", Weights("w", w)), false);
    if (e != Epilogue::None && e != Epilogue::Relu) {
      y = net.add_elementwise("bias", y, net.add_constant("b", Weights("b", bias)), ElementwiseOp::Add);
    }
    if (e == Epilogue::BiasRelu || e == Epilogue::Relu)
      y = net.add_activation("act", y, ActivationKind::Relu);
    if (e == Epilogue::BiasGelu) y = net.add_activation("act", y, ActivationKind::GeluTanh);
    if (e == Epilogue::BiasGeluErf) y = net.add_activation("act", y, ActivationKind::GeluErf);
    y->set_name("y");
    net.mark_output(y);
  };
}

/// y = a @ b with both operands inputs (batched or broadcast), then a ReLU.
std::function<void(Network&)> batched(const Dims& a_dims, const Dims& b_dims) {
  return [=](Network& net) {
    Tensor* a = net.add_input("a", DType::Float32, a_dims);
    Tensor* b = net.add_input("b", DType::Float32, b_dims);
    Tensor* y = net.add_matrix_multiply("mm", a, false, b, false);
    y = net.add_activation("act", y, ActivationKind::Relu);
    y->set_name("y");
    net.mark_output(y);
  };
}

BuilderConfig cuda_config(Precision p) {
  BuilderConfig config;
  config.backend = "cuda";
  config.precisions = {Precision::FP32};
  if (p != Precision::FP32) config.precisions.push_back(p);
  return config;  // timing_iterations stays > 0: the builder times tactics, and the matmul its candidates
}

/// Index of the plan's only MatrixMultiply layer.
size_t matmul_index(const Plan& plan) {
  std::vector<size_t> found;
  const auto& layers = plan.impl().layers;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].layer.kind == LayerKind::MatrixMultiply) found.push_back(i);
  }
  EXPECT_EQ(found.size(), 1u);
  return found.empty() ? 0 : found[0];
}

std::string precision_text(Precision p) { return precision_name(p); }

void expect_bitwise_equal(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.nbytes(), want.nbytes()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << what << ": not bit-exact";
}

/// Builds `make` on cpu (fp32) and on cuda at precision `p`; the cuda matmul must have been tuned (plan data
/// recorded) and run with its tuned algorithm; output 0 matches the cpu's.
void expect_tuned_matches_cpu(const std::function<void(Network&)>& make,
                              const std::map<std::string, HostTensor>& in, Precision p,
                              const std::string& what, bool tf32 = false) {
  Network a, b;
  make(a);
  make(b);
  auto cpu = build(a);
  cuda::MatmulTuningStats before = cuda::matmul_tuning_stats();
  BuilderConfig config = cuda_config(p);
  config.allow_tf32 = tf32;
  auto gpu = build(b, config);
  cuda::MatmulTuningStats built = cuda::matmul_tuning_stats();
  EXPECT_GE(built.tuned, before.tuned + 1) << what << ": the matmul was not tuned";
  EXPECT_FALSE(gpu->impl().layers[matmul_index(*gpu)].kernel_data.empty()) << what << ": no plan data";
  auto want = run(cpu, in);
  auto got = run(gpu, in);
  EXPECT_GE(cuda::matmul_tuning_stats().used, built.used + 1) << what << ": the tuned algorithm did not run";
  double tol = p == Precision::FP32 ? 1e-4 : 1e-2;
  expect_close(got[0], values(want[0]), tol, tol, what);
}

TEST(EngineCuda, CublasLtTunedMatmulEqualsCpu) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(811);
  HostTensor w = grid({64, 96}, rng), bias = grid({96}, rng);
  Dims xd = {2, 37, 64};
  std::map<std::string, HostTensor> in = {{"x", grid(xd, rng)}};
  for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16}) {
    for (Epilogue e : {Epilogue::None, Epilogue::Bias, Epilogue::BiasRelu, Epilogue::BiasGelu, Epilogue::Relu,
                       Epilogue::BiasGeluErf}) {
      expect_tuned_matches_cpu(linear(xd, w, bias, e), in, p,
                               std::string("linear ") + epilogue_name(e) + " " + precision_text(p));
    }
    // TF32 allowed (fp32): both tactics tuned, then timed against each other; the grid values are exact in
    // TF32.
    if (p == Precision::FP32) {
      expect_tuned_matches_cpu(linear(xd, w, bias, Epilogue::BiasGelu), in, p, "linear bias+gelu_tanh tf32",
                               true);
    }
    // Strided batch, a broadcast over b's batch, and per-matrix calls (broadcast in both operands).
    for (auto [ad, bd] : std::vector<std::pair<Dims, Dims>>{
             {{3, 40, 24}, {3, 24, 56}}, {{40, 24}, {2, 3, 24, 56}}, {{2, 1, 16, 24}, {1, 3, 24, 32}}}) {
      std::string what = "batched a" + std::to_string(ad.size()) + "d b" + std::to_string(bd.size()) + "d " +
                         precision_text(p);
      expect_tuned_matches_cpu(batched(ad, bd), {{"a", grid(ad, rng)}, {"b", grid(bd, rng)}}, p, what);
    }
  }
}

TEST(EngineCuda, CublasLtLoadedPlanRunsTheStoredAlgorithm) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(812);
  HostTensor w = grid({64, 128}, rng), bias = grid({128}, rng);
  Dims xd = {4, 50, 64};
  std::map<std::string, HostTensor> in = {{"x", grid(xd, rng)}};
  for (Precision p : {Precision::FP32, Precision::FP16}) {
    Network net;
    linear(xd, w, bias, Epilogue::BiasGelu)(net);
    auto plan = build(net, cuda_config(p));
    size_t li = matmul_index(*plan);
    std::vector<uint8_t> data = plan->impl().layers[li].kernel_data;
    MatmulPlanData d;
    std::string why;
    ASSERT_TRUE(cuda::decode_matmul_plan_data(data, &d, &why)) << why;
    EXPECT_EQ(d.call, (MatmulCallKey{200, 128, 64, 1, 0, 0, 256}));  // the opt shape's flattened call
    auto want = run(plan, in);
    std::vector<uint8_t> bytes = plan->serialize();
    cuda::MatmulTuningStats before = cuda::matmul_tuning_stats();
    auto loaded = Plan::deserialize(bytes);
    cuda::MatmulTuningStats after = cuda::matmul_tuning_stats();
    EXPECT_EQ(after.tuned, before.tuned) << "loading a plan timed candidates";
    EXPECT_EQ(after.stored, before.stored + 1);
    EXPECT_EQ(after.rejected, before.rejected);
    // The loaded kernel records what it uses: the stored algorithm.
    EXPECT_EQ(loaded->impl().layers[matmul_index(*loaded)].kernel_data, data);
    auto got = run(loaded, in);
    EXPECT_GE(cuda::matmul_tuning_stats().used, after.used + 1);
    expect_bitwise_equal(got[0], want[0], std::string("loaded plan ") + precision_text(p));
  }
}

TEST(EngineCuda, CublasLtBadPlanDataFallsBackToTheHeuristic) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(813);
  HostTensor w = grid({64, 96}, rng), bias = grid({96}, rng);
  Dims xd = {3, 20, 64};
  std::map<std::string, HostTensor> in = {{"x", grid(xd, rng)}};
  Network ref_net, net;
  linear(xd, w, bias, Epilogue::BiasRelu)(ref_net);
  linear(xd, w, bias, Epilogue::BiasRelu)(net);
  auto want = run(build(ref_net), in);
  auto plan = build(net, cuda_config(Precision::FP32));
  size_t li = matmul_index(*plan);
  const std::vector<uint8_t> good = plan->impl().layers[li].kernel_data;
  MatmulPlanData d;
  std::string why;
  ASSERT_TRUE(cuda::decode_matmul_plan_data(good, &d, &why)) << why;
  auto variant = [&](auto change) {
    MatmulPlanData v = d;
    change(v);
    return cuda::encode_matmul_plan_data(v);
  };
  std::vector<std::pair<std::string, std::vector<uint8_t>>> bad = {
      {"truncated", std::vector<uint8_t>(good.begin(), good.end() - 1)},
      {"not matmul data", {1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {"another shape", variant([](MatmulPlanData& v) { v.call.m += 1; })},
      {"another alignment", variant([](MatmulPlanData& v) { v.call.align = 16; })},
      {"another epilogue", variant([](MatmulPlanData& v) { v.epilogue = 0; })},
      {"another compute mode", variant([](MatmulPlanData& v) { v.compute = 1; })},
      {"garbage algorithm", variant([](MatmulPlanData& v) { v.algo.fill(~uint64_t{0}); })},
  };
  {
    std::vector<uint8_t> b = good;
    b[4] = static_cast<uint8_t>(cuda::kMatmulPlanDataVersion + 1);
    bad.emplace_back("newer version", b);
  }
  for (const auto& [what, bytes] : bad) {
    plan->impl().layers[li].kernel_data = bytes;
    cuda::MatmulTuningStats before = cuda::matmul_tuning_stats();
    ASSERT_NO_THROW(plan->impl().create_kernels(static_cast<int64_t>(li))) << what;
    cuda::MatmulTuningStats after = cuda::matmul_tuning_stats();
    EXPECT_EQ(after.rejected, before.rejected + 1) << what;
    EXPECT_EQ(after.stored, before.stored) << what;
    EXPECT_EQ(after.tuned, before.tuned) << what;
    EXPECT_TRUE(plan->impl().layers[li].kernel_data.empty())
        << what << ": a rejected algorithm is not recorded";
    expect_close(run(plan, in)[0], values(want[0]), 1e-4, 1e-4, what);
  }
  // No plan data (a plan from before tuning): the heuristic, nothing timed, nothing rejected; it round-trips.
  plan->impl().layers[li].kernel_data.clear();
  cuda::MatmulTuningStats before = cuda::matmul_tuning_stats();
  plan->impl().create_kernels(static_cast<int64_t>(li));
  auto loaded = Plan::deserialize(plan->serialize());
  cuda::MatmulTuningStats after = cuda::matmul_tuning_stats();
  EXPECT_EQ(after.tuned, before.tuned);
  EXPECT_EQ(after.rejected, before.rejected);
  EXPECT_EQ(after.stored, before.stored);
  EXPECT_TRUE(loaded->impl().layers[matmul_index(*loaded)].kernel_data.empty());
  expect_close(run(loaded, in)[0], values(want[0]), 1e-4, 1e-4, "no plan data");
  // The good data again: the stored algorithm.
  plan->impl().layers[li].kernel_data = good;
  plan->impl().create_kernels(static_cast<int64_t>(li));
  EXPECT_EQ(plan->impl().layers[li].kernel_data, good);
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
