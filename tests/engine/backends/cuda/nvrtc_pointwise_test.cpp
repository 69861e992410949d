// The cuda tactic "nvrtc" (NVRTC-compiled pointwise chains). On every machine with the CUDA toolkit: source
// generation (ops named, deterministic, specialized on static shapes), index patterns, the plan data format,
// and NVRTC compilation of the generated source for sm_90 (no GPU needed). With a GPU (EngineCuda.*, label
// gpu through kiln_engine_gpu_tests): "nvrtc" against "generic" on the same layers and inputs, compared
// bit for bit (both compute with the same formulas in float, or double for integer programs, and round the
// same way), and a serialized plan that runs after loading without calling NVRTC again.

#if KILN_HAVE_CUDA

#include <cstdlib>
#include <cstring>
#include <limits>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/pointwise/nvrtc_module.h"
#include "engine/backends/cuda/pointwise/nvrtc_source.h"
#include "engine/engine_test_util.h"
#include "engine/pointwise_programs.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;
using cuda::PwIndexMode;

TensorInfo tensor(DType dt, const Dims& d, const std::string& name = "t") { return {name, dt, d, d, d}; }

/// A layer with its LayerInfo (the info points into the layer).
struct TestLayer {
  Layer layer;
  LayerInfo info;
  TestLayer(LayerKind kind, LayerParams params, std::vector<TensorInfo> inputs, TensorInfo output,
            std::vector<Weights> weights = {}) {
    layer.name = std::string(layer_kind_name(kind)) + "_test";
    layer.kind = kind;
    layer.params = std::move(params);
    layer.weights = std::move(weights);
    for (size_t i = 0; i < inputs.size(); ++i) layer.inputs.push_back(static_cast<int64_t>(i));
    layer.outputs = {static_cast<int64_t>(inputs.size())};
    info.inputs = std::move(inputs);
    info.outputs = {std::move(output)};
    info.layer = &layer;
  }
  TestLayer(const TestLayer&) = delete;
};

PointwiseInstr pw(LayerKind kind, int64_t op, std::vector<int64_t> operands) {
  return programs::instr(kind, op, std::move(operands));
}
int64_t in(int k) { return PointwiseInstr::kInput + k; }
int64_t wt(int k) { return PointwiseInstr::kWeight + k; }
int64_t tmp(int k) { return PointwiseInstr::kTemp + k; }

/// x * w0 + w1 (per channel), tanh-GELU, + residual in1, cast: a typical fused epilogue.
FusedPointwiseParams epilogue_program() {
  FusedPointwiseParams f;
  f.program.push_back(pw(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Mul), {in(0), wt(0)}));
  f.program.push_back(pw(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Add), {tmp(0), wt(1)}));
  PointwiseInstr act = pw(LayerKind::Activation, 0, {tmp(1)});
  act.activation.kind = ActivationKind::GeluTanh;
  f.program.push_back(act);
  f.program.push_back(pw(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Add), {tmp(2), in(1)}));
  f.program.push_back(pw(LayerKind::Cast, 0, {tmp(3)}));
  return f;
}

// ---- Source generation and plan data (no GPU needed) ----

TEST(EngineNvrtcSource, IndexPatterns) {
  auto mode = [](const Dims& s, const Dims& o) { return cuda::pw_index(s, o).mode; };
  EXPECT_EQ(mode({2, 3, 4}, {2, 3, 4}), PwIndexMode::Full);
  EXPECT_EQ(mode({3, 4}, {2, 3, 4}), PwIndexMode::Inner);
  EXPECT_EQ(mode({1}, {2, 3, 4}), PwIndexMode::Scalar);
  EXPECT_EQ(mode({}, {2, 3, 4}), PwIndexMode::Scalar);
  EXPECT_EQ(mode({2, 1, 1}, {2, 3, 4}), PwIndexMode::Outer);
  EXPECT_EQ(mode({3, 1}, {2, 3, 4}), PwIndexMode::Channel);
  EXPECT_EQ(mode({2, 1, 4, 1}, {2, 3, 4, 5}), PwIndexMode::General);
  EXPECT_EQ(mode({1, 5, 1, 8}, {2, 5, 7, 8}), PwIndexMode::General);        // a leading broadcast
  EXPECT_EQ(mode({2, 1, 7, 1, 8}, {2, 5, 7, 3, 8}), PwIndexMode::General);  // three kept runs
  // Leading and trailing dims kept around a broadcast run: a channels-last [N, 1, 1, C] scale.
  EXPECT_EQ(mode({2, 1, 4}, {2, 3, 4}), PwIndexMode::OuterInner);
  cuda::PwIndex oi = cuda::pw_index({2, 1, 1, 8}, {2, 5, 7, 8});
  EXPECT_EQ(oi.mode, PwIndexMode::OuterInner);
  EXPECT_EQ(oi.div, 5 * 7 * 8);
  EXPECT_EQ(oi.len, 8);
  EXPECT_EQ(mode({2, 1, 1, 8}, {2, 5, 1, 8}), PwIndexMode::OuterInner);
  EXPECT_EQ(mode({1, 3, 4}, {1, 3, 4}), PwIndexMode::Full);
  cuda::PwIndex c = cuda::pw_index({3, 1}, {2, 3, 4});
  EXPECT_EQ(c.div, 4);
  EXPECT_EQ(c.len, 3);
  cuda::PwIndex o = cuda::pw_index({2, 3, 1, 1}, {2, 3, 5, 7});
  EXPECT_EQ(o.mode, PwIndexMode::Outer);
  EXPECT_EQ(o.div, 35);
}

TEST(EngineNvrtcSource, FusedChainSourceNamesItsOpsAndIsDeterministic) {
  std::mt19937 rng(301);
  std::vector<Weights> w = {Weights("scale", random_tensor(DType::Float16, {4, 1, 1}, rng)),
                            Weights("shift", random_tensor(DType::Float16, {4, 1, 1}, rng))};
  TestLayer t(LayerKind::FusedPointwise, epilogue_program(),
              {tensor(DType::Float16, {2, 4, 5, 7}), tensor(DType::Float16, {2, 4, 5, 7})},
              tensor(DType::Float16, {2, 4, 5, 7}), w);
  cuda::NvrtcPwSpec spec = cuda::nvrtc_pointwise_spec(t.info);
  std::string src = cuda::nvrtc_pointwise_source(spec);
  EXPECT_EQ(src, cuda::nvrtc_pointwise_source(cuda::nvrtc_pointwise_spec(t.info)));
  for (const char* want : {"typedef float T;", "typedef unsigned int I;", "(s0 * s2)", "(t0 + s3)",
                           "a_gelu_tanh(t1,", "(t2 + s1)", "KILN_KEEP(t4)", "return t4;", "ld_f16", "to_f16",
                           "kiln_pw_general", "kiln_pw_fast", "(I)280ll"}) {
    EXPECT_NE(src.find(want), std::string::npos) << want << " in\n" << src;
  }
  // Weights are per channel: the fast kernel indexes them as (i / 35) % 4; no 4-wide kernel then.
  ASSERT_TRUE(spec.fast);
  EXPECT_EQ(spec.fast_index[2].mode, PwIndexMode::Channel);
  EXPECT_FALSE(spec.vec);
  EXPECT_NE(src.find("(i / (I)35ll) % (I)4ll"), std::string::npos) << src;

  // Another activation parameter gives other source.
  FusedPointwiseParams other = epilogue_program();
  other.program[2].activation.kind = ActivationKind::LeakyRelu;
  other.program[2].activation.alpha = 0.25;
  TestLayer u(LayerKind::FusedPointwise, other, t.info.inputs, t.info.outputs[0], w);
  std::string src2 = cuda::nvrtc_pointwise_source(cuda::nvrtc_pointwise_spec(u.info));
  EXPECT_NE(src2, src);
  EXPECT_NE(src2.find("a_leaky_relu(t1, T(__int_as_float(0x3e800000))"), std::string::npos) << src2;
}

TEST(EngineNvrtcSource, DynamicShapesComeFromParameters) {
  TensorInfo a{"a", DType::Float32, {1, 16}, {4, 16}, {8, 16}}, b = a;
  TensorInfo out = a;
  TestLayer t(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Add}, {a, b}, out);
  cuda::NvrtcPwSpec spec = cuda::nvrtc_pointwise_spec(t.info);
  EXPECT_TRUE(spec.static_out.empty());
  EXPECT_TRUE(spec.vec);  // both flat at the opt shape
  std::string src = cuda::nvrtc_pointwise_source(spec);
  for (const char* want : {"(I)a.n", "(I)a.d[1]", "(I)a.st[1][0]", "kiln_pw_vec", "v4_f32"}) {
    EXPECT_NE(src.find(want), std::string::npos) << want << " in\n" << src;
  }
}

// A mask of float math (a Bool output of float sources) computes in float, as the reference rounds that math;
// integer outputs and sources in double.
TEST(EngineNvrtcSource, MasksOfFloatMathComputeInFloat) {
  auto use_double = [](DType in, DType out, LayerKind kind = LayerKind::Elementwise) {
    LayerParams params = ElementwiseParams{ElementwiseOp::Greater};
    if (kind == LayerKind::Cast) params = CastParams{out};
    std::vector<TensorInfo> inputs = {tensor(in, {4})};
    if (kind == LayerKind::Elementwise) inputs.push_back(tensor(in, {4}));
    TestLayer t(kind, params, inputs, tensor(out, {4}));
    return cuda::pointwise_program(t.info).use_double;
  };
  EXPECT_FALSE(use_double(DType::Float32, DType::Bool));
  EXPECT_FALSE(use_double(DType::Float16, DType::Bool));
  EXPECT_FALSE(use_double(DType::Bool, DType::Bool));
  EXPECT_TRUE(use_double(DType::Int64, DType::Bool));
  EXPECT_TRUE(use_double(DType::Float64, DType::Bool));
  EXPECT_TRUE(use_double(DType::Float32, DType::Int32, LayerKind::Cast));
  EXPECT_FALSE(use_double(DType::Float32, DType::Bool, LayerKind::Cast));
}

TEST(EngineNvrtcSource, IntegerProgramsComputeInDouble) {
  TestLayer t(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::FloorDiv},
              {tensor(DType::Int32, {3, 4}), tensor(DType::Int32, {4})}, tensor(DType::Int32, {3, 4}));
  std::string src = cuda::nvrtc_pointwise_source(cuda::nvrtc_pointwise_spec(t.info));
  for (const char* want :
       {"typedef double T;", "e_floordiv_int(s0, s1)", "#define KM(name) name\n", "\"+d\"", "k_int(v)"}) {
    EXPECT_NE(src.find(want), std::string::npos) << want << " in\n" << src;
  }
}

TEST(EngineNvrtcSource, PlanDataRoundTripAndHostileBytes) {
  cuda::NvrtcPlanData d{90, "source text", {1, 2, 3, 4, 5}};
  std::vector<uint8_t> bytes = cuda::encode_nvrtc_plan_data(d);
  cuda::NvrtcPlanData back = cuda::decode_nvrtc_plan_data(bytes, "l");
  EXPECT_EQ(back.arch, 90);
  EXPECT_EQ(back.source, d.source);
  EXPECT_EQ(back.cubin, d.cubin);
  for (size_t cut : {size_t{0}, size_t{5}, size_t{12}, size_t{20}, bytes.size() - 1}) {
    std::vector<uint8_t> b(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_THROW(cuda::decode_nvrtc_plan_data(b, "l"), kiln::Error) << cut;
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(cuda::decode_nvrtc_plan_data(longer, "l"), kiln::Error);
  std::vector<uint8_t> huge = bytes;
  huge[16 + 7] = 0x7f;  // source size near 2^63
  EXPECT_THROW(cuda::decode_nvrtc_plan_data(huge, "l"), kiln::Error);
}

/// Layers covering every op, dtype family and index pattern, for the NVRTC compile test.
std::vector<std::unique_ptr<TestLayer>> coverage_layers() {
  std::vector<std::unique_ptr<TestLayer>> out;
  std::mt19937 rng(302);
  Dims d = {3, 5, 8};
  for (int op = 0; op <= static_cast<int>(ElementwiseOp::Xor); ++op) {
    auto e = static_cast<ElementwiseOp>(op);
    DType dt = is_logical(e) ? DType::Bool : DType::BFloat16;
    DType odt = is_comparison(e) || is_logical(e) ? DType::Bool : dt;
    out.push_back(std::make_unique<TestLayer>(LayerKind::Elementwise, ElementwiseParams{e},
                                              std::vector<TensorInfo>{tensor(dt, d), tensor(dt, {5, 1})},
                                              tensor(odt, d)));
    if (!is_logical(e)) {
      out.push_back(std::make_unique<TestLayer>(
          LayerKind::Elementwise, ElementwiseParams{e},
          std::vector<TensorInfo>{tensor(DType::Int64, d), tensor(DType::Int64, {3, 1, 8})},
          tensor(is_comparison(e) ? DType::Bool : DType::Int64, d)));
    }
  }
  for (int k = 0; k <= static_cast<int>(ActivationKind::Mish); ++k) {
    ActivationParams a;
    a.kind = static_cast<ActivationKind>(k);
    out.push_back(std::make_unique<TestLayer>(LayerKind::Activation, a,
                                              std::vector<TensorInfo>{tensor(DType::Float16, d)},
                                              tensor(DType::Float16, d)));
  }
  for (int u = 0; u <= static_cast<int>(UnaryOp::IsInf); ++u) {
    auto op = static_cast<UnaryOp>(u);
    DType dt = op == UnaryOp::Not ? DType::Bool : DType::Float32;
    DType odt = op == UnaryOp::IsNan || op == UnaryOp::IsInf ? DType::Bool : dt;
    out.push_back(std::make_unique<TestLayer>(LayerKind::Unary, UnaryParams{op},
                                              std::vector<TensorInfo>{tensor(dt, d)}, tensor(odt, d)));
  }
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{{DType::Float32, DType::Int8},
                                                              {DType::UInt8, DType::BFloat16},
                                                              {DType::Int16, DType::Float64},
                                                              {DType::Int32, DType::Bool}}) {
    out.push_back(std::make_unique<TestLayer>(LayerKind::Cast, CastParams{to},
                                              std::vector<TensorInfo>{tensor(from, d)}, tensor(to, d)));
  }
  out.push_back(std::make_unique<TestLayer>(
      LayerKind::Select, SelectParams{},
      std::vector<TensorInfo>{tensor(DType::Bool, {3, 1, 8}), tensor(DType::Float16, d),
                              tensor(DType::Float16, {8})},
      tensor(DType::Float16, d)));
  std::vector<Weights> w = {Weights("scale", random_tensor(DType::Float32, {5, 1}, rng)),
                            Weights("shift", random_tensor(DType::Float32, {1}, rng))};
  out.push_back(std::make_unique<TestLayer>(
      LayerKind::FusedPointwise, epilogue_program(),
      std::vector<TensorInfo>{tensor(DType::Float32, d), tensor(DType::Float32, d)},
      tensor(DType::Float32, d), w));
  return out;
}

TEST(EngineNvrtcSource, GeneratedSourceCompilesWithNvrtcForSm90) {
  int64_t before = cuda::nvrtc_compile_count();
  auto layers = coverage_layers();
  for (const auto& t : layers) {
    std::string src = cuda::nvrtc_pointwise_source(cuda::nvrtc_pointwise_spec(t->info));
    std::vector<uint8_t> cubin;
    try {
      cubin = cuda::nvrtc_compile(src, 90, t->layer.name);
    } catch (const kiln::Error& e) {
      ADD_FAILURE() << e.message() << "\n" << src;
      continue;
    }
    EXPECT_GT(cubin.size(), 100u) << t->layer.name;
  }
  EXPECT_EQ(cuda::nvrtc_compile_count() - before, static_cast<int64_t>(layers.size()));
}

TEST(EngineNvrtcSource, CompileErrorsCarryTheNvrtcLog) {
  try {
    cuda::nvrtc_compile("extern \"C\" __global__ void k() { undeclared_thing = 1; }", 90, "layer 'bad'");
    FAIL() << "expected a compile error";
  } catch (const kiln::Error& e) {
    std::string m = e.message();
    EXPECT_NE(m.find("layer 'bad'"), std::string::npos) << m;
    EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << m;
  }
}

// ---- On the GPU: "nvrtc" equals "generic" ----

std::vector<uint8_t> run_kernel(const LayerInfo& info, const std::string& tactic,
                                const std::vector<HostTensor>& inputs, const Dims& out_dims,
                                size_t out_offset_elems = 0) {
  const Backend& b = *shared_backend("cuda");
  std::unique_ptr<Kernel> k = b.create_kernel(info, tactic);
  DeviceBuffers dev{&b, {}};
  KernelArgs args;
  for (const auto& t : inputs) {
    void* p = dev.add(t.nbytes());
    b.copy(p, t.data(), t.nbytes(), CopyKind::HostToDevice, nullptr);
    args.inputs.push_back(TensorView{p, t.dtype(), t.sizes()});
    args.input_values.push_back(nullptr);
  }
  DType odt = info.outputs[0].dtype;
  size_t es = dtype_size(odt), bytes = static_cast<size_t>(HostTensor(odt, out_dims).nbytes());
  auto* base = static_cast<uint8_t*>(dev.add(bytes + (out_offset_elems + 1) * es));
  void* out = base + out_offset_elems * es;
  args.outputs.push_back(TensorView{out, odt, out_dims});
  auto state = k->create_state();
  args.state = state.get();
  k->execute(args);
  std::vector<uint8_t> host(bytes);
  b.copy(host.data(), out, bytes, CopyKind::DeviceToHost, nullptr);
  b.synchronize(nullptr);
  return host;
}

/// Distance in units in the last place between two floats of one sign (large when the signs differ).
int64_t float_ulps_apart(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if ((ia < 0) != (ib < 0)) return a == b ? 0 : std::numeric_limits<int64_t>::max();
  return std::llabs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

/// Runs both tactics; expects the same bytes, or for fp32 outputs at most `max_ulps` apart.
void expect_same(const LayerInfo& info, const std::vector<HostTensor>& inputs, const std::string& what,
                 Dims out_dims = {}, size_t out_offset_elems = 0, int64_t max_ulps = 0) {
  if (out_dims.empty()) out_dims = info.outputs[0].opt;
  std::vector<uint8_t> g = run_kernel(info, "generic", inputs, out_dims);
  std::vector<uint8_t> n = run_kernel(info, "nvrtc", inputs, out_dims, out_offset_elems);
  ASSERT_EQ(g.size(), n.size()) << what;
  if (g == n) return;
  HostTensor gt(info.outputs[0].dtype, out_dims), nt(info.outputs[0].dtype, out_dims);
  std::memcpy(gt.mutable_data(), g.data(), g.size());
  std::memcpy(nt.mutable_data(), n.data(), n.size());
  int bad = 0;
  std::string first;
  for (int64_t i = 0; i < gt.numel(); ++i) {
    double a = gt.get_as_double(i), b = nt.get_as_double(i);
    if ((std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 8) == 0) continue;
    if (gt.dtype() == DType::Float32 &&
        float_ulps_apart(static_cast<float>(a), static_cast<float>(b)) <= max_ulps)
      continue;
    if (++bad <= 5)
      first += " [" + std::to_string(i) + "] generic " + std::to_string(a) + " nvrtc " + std::to_string(b);
  }
  if (bad) ADD_FAILURE() << what << ": " << bad << " of " << gt.numel() << " elements differ:" << first;
}

/// The fp32 difference allowed on chains with tanh-GELU, 64 ulp = relative 7.6e-6 (see
/// NvrtcEqualsGenericOnFusedChains).
constexpr int64_t kGeluUlps = 64;

HostTensor random_of(DType dt, const Dims& d, std::mt19937& rng, double lo = -3, double hi = 3) {
  return random_tensor(dt, d, rng, lo, hi);
}

TEST(EngineCuda, NvrtcEqualsGenericOnElementwiseBroadcasts) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(311);
  Dims d = {3, 5, 8};
  const std::vector<Dims> others = {{3, 5, 8}, {8}, {3, 1, 1}, {5, 1}, {1}, {3, 1, 8} /* outer_inner */,
                                    {1, 5, 1}};
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (int op = 0; op < static_cast<int>(ElementwiseOp::And); ++op) {
      auto e = static_cast<ElementwiseOp>(op);
      for (const Dims& o : others) {
        TestLayer t(LayerKind::Elementwise, ElementwiseParams{e}, {tensor(dt, d), tensor(dt, o)},
                    tensor(is_comparison(e) ? DType::Bool : dt, d));
        expect_same(t.info, {random_of(dt, d, rng), random_of(dt, o, rng)},
                    std::string(elementwise_op_name(e)) + " " + dtype_name(dt) + " rhs rank " +
                        std::to_string(o.size()) + " [" + std::to_string(o[0]) + "]");
      }
    }
  }
  for (ElementwiseOp e : {ElementwiseOp::And, ElementwiseOp::Or, ElementwiseOp::Xor}) {
    TestLayer t(LayerKind::Elementwise, ElementwiseParams{e},
                {tensor(DType::Bool, d), tensor(DType::Bool, {5, 1})}, tensor(DType::Bool, d));
    expect_same(t.info, {random_of(DType::Bool, d, rng, 0, 2), random_of(DType::Bool, {5, 1}, rng, 0, 2)},
                elementwise_op_name(e));
  }
}

TEST(EngineCuda, NvrtcEqualsGenericOnIntegerPrograms) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(312);
  Dims d = {4, 33};
  for (DType dt : {DType::Int32, DType::Int64}) {
    for (int op = 0; op < static_cast<int>(ElementwiseOp::And); ++op) {
      auto e = static_cast<ElementwiseOp>(op);
      TestLayer t(LayerKind::Elementwise, ElementwiseParams{e}, {tensor(dt, d), tensor(dt, {33})},
                  tensor(is_comparison(e) ? DType::Bool : dt, d));
      // Divisors include zeros (integer division by zero gives 0 in both).
      expect_same(t.info, {random_of(dt, d, rng, -20, 20), random_of(dt, {33}, rng, -4, 4)},
                  std::string(elementwise_op_name(e)) + " " + dtype_name(dt));
    }
  }
  // An integer fused chain: (a // b) % w0 * a.
  FusedPointwiseParams f;
  f.program.push_back(
      pw(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::FloorDiv), {in(0), in(1)}));
  f.program.push_back(pw(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Mod), {tmp(0), wt(0)}));
  f.program.push_back(pw(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Mul), {tmp(1), in(0)}));
  TestLayer t(LayerKind::FusedPointwise, f, {tensor(DType::Int32, d), tensor(DType::Int32, d)},
              tensor(DType::Int32, d), {Weights("m", random_of(DType::Int32, {4, 1}, rng, 1, 7))});
  expect_same(t.info, {random_of(DType::Int32, d, rng, -50, 50), random_of(DType::Int32, d, rng, -5, 5)},
              "fused integer chain");
}

TEST(EngineCuda, NvrtcEqualsGenericOnActivationsUnaryCastSelect) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(313);
  Dims d = {2, 3, 41};
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (int k = 0; k <= static_cast<int>(ActivationKind::Mish); ++k) {
      ActivationParams a;
      a.kind = static_cast<ActivationKind>(k);
      a.alpha = a.kind == ActivationKind::Clip ? -0.5 : a.kind == ActivationKind::HardSigmoid ? 0.2 : 0.1;
      a.beta = a.kind == ActivationKind::Clip ? 0.75 : a.kind == ActivationKind::Softplus ? 2.0 : 0.5;
      TestLayer t(LayerKind::Activation, a, {tensor(dt, d)}, tensor(dt, d));
      expect_same(t.info, {random_of(dt, d, rng, -5, 5)},
                  std::string(activation_kind_name(a.kind)) + " " + dtype_name(dt));
    }
    for (int u = 0; u <= static_cast<int>(UnaryOp::IsInf); ++u) {
      auto op = static_cast<UnaryOp>(u);
      DType idt = op == UnaryOp::Not ? DType::Bool : dt;
      DType odt = op == UnaryOp::IsNan || op == UnaryOp::IsInf ? DType::Bool : idt;
      TestLayer t(LayerKind::Unary, UnaryParams{op}, {tensor(idt, d)}, tensor(odt, d));
      HostTensor x = op == UnaryOp::Not ? random_of(idt, d, rng, 0, 2) : random_of(idt, d, rng, -2, 2);
      expect_same(t.info, {x}, std::string(unary_op_name(op)) + " " + dtype_name(dt));
    }
  }
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{{DType::Float32, DType::Float16},
                                                              {DType::Float16, DType::Int32},
                                                              {DType::BFloat16, DType::Float32},
                                                              {DType::Float32, DType::Int8},
                                                              {DType::Int64, DType::Bool},
                                                              {DType::Bool, DType::Float32},
                                                              {DType::Int32, DType::BFloat16}}) {
    TestLayer t(LayerKind::Cast, CastParams{to}, {tensor(from, d)}, tensor(to, d));
    expect_same(t.info, {random_of(from, d, rng, -300, 300)},
                std::string("cast ") + dtype_name(from) + " to " + dtype_name(to));
  }
  for (DType dt : {DType::Float32, DType::Float16}) {
    TestLayer t(LayerKind::Select, SelectParams{},
                {tensor(DType::Bool, {2, 1, 41}), tensor(dt, d), tensor(dt, {41})}, tensor(dt, d));
    expect_same(
        t.info,
        {random_of(DType::Bool, {2, 1, 41}, rng, 0, 2), random_of(dt, d, rng), random_of(dt, {41}, rng)},
        std::string("select ") + dtype_name(dt));
  }
}

TEST(EngineCuda, NvrtcEqualsGenericOnFusedChains) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(314);
  Dims d = {2, 4, 5, 7};
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    std::vector<Weights> w = {Weights("scale", random_of(dt, {4, 1, 1}, rng)),
                              Weights("shift", random_of(dt, {4, 1, 1}, rng))};
    TestLayer t(LayerKind::FusedPointwise, epilogue_program(), {tensor(dt, d), tensor(dt, d)}, tensor(dt, d),
                w);
    // tanh-GELU: nvcc (generic) and NVRTC evaluate tanhf and contract the formula's multiply-adds
    // differently, so fp32 results differ in the last bits (measured on an H100: up to ~8 ulp, relative
    // 1e-6); fp16/bf16 exact.
    expect_same(t.info, {random_of(dt, d, rng), random_of(dt, d, rng)},
                std::string("epilogue ") + dtype_name(dt), {}, 0, kGeluUlps);
    // Flat weights (4-wide kernel), output misaligned (fast kernel) and an odd element count (tail).
    std::vector<Weights> flat = {Weights("scale", random_of(dt, {1}, rng)),
                                 Weights("shift", random_of(dt, {7}, rng))};
    Dims odd = {3, 5, 7};
    TestLayer v(LayerKind::FusedPointwise, epilogue_program(), {tensor(dt, odd), tensor(dt, odd)},
                tensor(dt, odd), flat);
    std::vector<HostTensor> x = {random_of(dt, odd, rng), random_of(dt, odd, rng)};
    expect_same(v.info, x, std::string("flat epilogue ") + dtype_name(dt), {}, 0, kGeluUlps);
    expect_same(v.info, x, std::string("flat epilogue, misaligned output ") + dtype_name(dt), {}, 1,
                kGeluUlps);
  }
}

TEST(EngineCuda, NvrtcEqualsGenericOnDynamicShapes) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(315);
  TensorInfo a{"a", DType::Float16, {1, 16}, {4, 16}, {8, 16}}, b = a;
  TestLayer t(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Mul}, {a, b}, a);
  // Flat at the opt shape (4-wide kernel); other sizes; a broadcast only seen at run time (general kernel).
  for (auto [da, db] : std::vector<std::pair<Dims, Dims>>{
           {{4, 16}, {4, 16}}, {{7, 16}, {7, 16}}, {{5, 16}, {1, 16}}, {{1, 16}, {8, 16}}}) {
    Dims od = {std::max(da[0], db[0]), 16};
    expect_same(t.info, {random_of(DType::Float16, da, rng), random_of(DType::Float16, db, rng)},
                "dynamic " + std::to_string(da[0]) + "x" + std::to_string(db[0]), od);
  }
}

TEST(EngineCuda, NvrtcStoredCodeForAnotherArchIsAClearError) {
  KILN_REQUIRE_GPU();
  TestLayer t(LayerKind::Activation, ActivationParams{}, {tensor(DType::Float32, {64})},
              tensor(DType::Float32, {64}));
  auto k = shared_backend("cuda")->create_kernel(t.info, "nvrtc");
  cuda::NvrtcPlanData d = cuda::decode_nvrtc_plan_data(k->plan_data(), "x");
  EXPECT_EQ(d.arch, cuda::current_compute_capability());
  d.arch = d.arch == 75 ? 80 : 75;
  std::vector<uint8_t> other = cuda::encode_nvrtc_plan_data(d);
  t.info.plan_data = &other;
  try {
    shared_backend("cuda")->create_kernel(t.info, "nvrtc");
    FAIL() << "expected an architecture error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(e.message().find("rebuild the plan"), std::string::npos) << e.message();
  }
}

TEST(EngineCuda, NvrtcPlanRunsAfterLoadingWithoutCompiling) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(316);
  HostTensor scale = random_tensor(DType::Float32, {6, 1}, rng),
             shift = random_tensor(DType::Float32, {6, 1}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {-1, 6, 10});
  Tensor* y =
      net.add_elementwise("mul", x, net.add_constant("scale", Weights("scale", scale)), ElementwiseOp::Mul);
  y = net.add_elementwise("add", y, net.add_constant("shift", Weights("shift", shift)), ElementwiseOp::Add);
  y = net.add_activation("gelu", y, ActivationKind::GeluTanh);
  y = net.add_elementwise("res", y, x, ElementwiseOp::Add);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.backend = "cuda";
  config.precisions = {Precision::FP32, Precision::FP16};
  config.timing_iterations = 0;  // the first tactic: "nvrtc"
  OptimizationProfile p;
  p.set_dimensions("x", {1, 6, 10}, {4, 6, 10}, {16, 6, 10});
  config.profiles.push_back(p);
  auto plan = build(net, config);
  int nvrtc_layers = 0;
  for (const auto& l : plan->layers()) nvrtc_layers += l.tactic == "nvrtc";
  EXPECT_GE(nvrtc_layers, 1);
  std::map<std::string, HostTensor> feed = {{"x", random_tensor(DType::Float32, {5, 6, 10}, rng)}};
  auto want = run(plan, feed);
  std::vector<uint8_t> bytes = plan->serialize();
  plan.reset();
  cuda::nvrtc_clear_module_cache();
  int64_t compiles = cuda::nvrtc_compile_count(), stored = cuda::nvrtc_stored_load_count();
  auto loaded = Plan::deserialize(bytes);
  auto got = run(loaded, feed);
  EXPECT_EQ(cuda::nvrtc_compile_count(), compiles) << "loading the plan called NVRTC";
  // One stored module per distinct source (layers with the same chain share one).
  EXPECT_GE(cuda::nvrtc_stored_load_count() - stored, 1);
  EXPECT_LE(cuda::nvrtc_stored_load_count() - stored, nvrtc_layers);
  ASSERT_EQ(got[0].nbytes(), want[0].nbytes());
  EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), want[0].nbytes()), 0);
  // The same chain built again compiles nothing either: the module comes from the process-wide cache.
  auto again = build(net, config);
  EXPECT_EQ(cuda::nvrtc_compile_count(), compiles);
  // Timed builds choose between "nvrtc" and "generic" and run right.
  config.timing_iterations = 2;
  auto timed = build(net, config);
  expect_close(run(timed, feed)[0], values(want[0]), 1e-2, 1e-2, "timed build");
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
