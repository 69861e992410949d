// Tests of the torch executor on hand-built graphs: symbolic values, Python operators, lists, in-place ops, the
// mappings of torch 2.x ops (scaled_dot_product_attention, _native_batch_norm_legit_no_training, squeeze.dims)
// against independent loop implementations, default filling, and errors.

#include "kiln/runtime/torch_executor.h"

#include <cmath>
#include <random>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kiln/runtime/libtorch_node_executor.h"
#include "kiln/support/error.h"

namespace kiln::runtime {
namespace {

using ir::Argument;
using ir::NamedArgument;
using ir::OpName;
using ir::OutputSpec;
using ir::SymExpr;
using ir::TensorMeta;
using ir::ValueKind;

TensorMeta meta_of(std::vector<SymExpr> sizes, DType dtype = DType::Float32) {
  TensorMeta meta;
  meta.dtype = dtype;
  meta.sizes = std::move(sizes);
  return meta;
}

at::Tensor random_tensor(std::vector<int64_t> sizes, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::randn(sizes, gen, at::kFloat);
}

ir::Node* add(ir::Graph& g, const std::string& op, std::vector<NamedArgument> args,
              std::vector<OutputSpec> outputs = {OutputSpec{}}) {
  return g.create_node(OpName::parse(op), std::move(args), std::move(outputs));
}

// Max |a - b| in double precision.
double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

TEST(TorchExecutor, SymSizeAndPythonArithmeticDriveAView) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({SymExpr::symbol("s0"), 6}));
  g.symbol_ranges()["s0"] = ir::SymRange{1, 16};
  ir::Node* size = add(g, "aten.sym_size.int", {{"self", Argument::tensor(x)}, {"dim", Argument::int_(0)}},
                       {OutputSpec{"n", ValueKind::SymInt, {}}});
  ir::Node* twice = add(g, "_operator.mul", {{"a", Argument::sym_int({size->output(), 0})}, {"b", Argument::int_(2)}},
                        {OutputSpec{"n2", ValueKind::SymInt, {}}});
  ir::Node* view = add(g, "aten.view.default",
                       {{"self", Argument::tensor(x)},
                        {"size", Argument::sym_ints({{twice->output(), 0}, {nullptr, 3}})}});
  g.set_outputs({view->output(), twice->output()});

  TorchExecutor executor(g);
  at::Tensor input = random_tensor({5, 6}, 1);
  auto out = executor.run({input});
  ASSERT_EQ(out.size(), 2u);
  // A view is exact: no arithmetic happens.
  EXPECT_TRUE(out[0].toTensor().equal(input.view({10, 3})));
  EXPECT_EQ(out[1].toInt(), 10);
}

// A device override runs factory ops on the override's device whatever device the program recorded (how a cuda
// module runs a program exported on the CPU); without it the recorded device is used. Here: recorded "meta"
// (tensors without data, which cannot meet the CPU input), overridden to the CPU.
TEST(TorchExecutor, DeviceOverrideReplacesRecordedDevices) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({4}));
  ir::Node* range = add(g, "aten.arange.default",
                        {{"end", Argument::int_(4)}, {"dtype", Argument::scalar_type(DType::Float32)},
                         {"device", Argument::device(ir::Device::parse("meta"))}});
  ir::Node* sum = add(g, "aten.add.Tensor", {{"self", Argument::tensor(x)}, {"other", Argument::tensor(range->output())}});
  g.set_outputs({range->output(), sum->output()});

  at::Tensor input = random_tensor({4}, 7);
  // Without the override, x (cpu) + arange (meta) is a device mismatch in libtorch.
  EXPECT_THROW(TorchExecutor(g).run({input}), Error);

  auto out = TorchExecutor(g, c10::Device(c10::kCPU)).run({input});
  ASSERT_TRUE(out[0].toTensor().device().is_cpu());
  // arange is exact and x + k is one rounding of exact operands: equal to libtorch's own sum.
  EXPECT_TRUE(out[0].toTensor().equal(at::arange(4, at::kFloat)));
  EXPECT_TRUE(out[1].toTensor().equal(input + at::arange(4, at::kFloat)));
}

TEST(TorchExecutor, PythonOperatorsFollowPythonIntegerSemantics) {
  ir::Graph g;
  ir::Value* n = g.add_input("n", ValueKind::SymInt);
  ir::Value* m = g.add_input("m", ValueKind::SymInt);
  auto binary = [&](const std::string& op) {
    return add(g, op, {{"a", Argument::sym_int({n, 0})}, {"b", Argument::sym_int({m, 0})}},
               {OutputSpec{"", ValueKind::SymInt, {}}})
        ->output();
  };
  std::vector<ir::Value*> outs = {binary("_operator.floordiv"), binary("_operator.mod"), binary("_operator.sub"),
                                  binary("_operator.add")};
  ir::Node* neg = add(g, "_operator.neg", {{"a", Argument::sym_int({n, 0})}}, {OutputSpec{"", ValueKind::SymInt, {}}});
  outs.push_back(neg->output());
  g.set_outputs(outs);
  TorchExecutor executor(g);
  auto out = executor.run({c10::IValue(int64_t{-7}), c10::IValue(int64_t{2})});
  EXPECT_EQ(out[0].toInt(), -4);  // Python: -7 // 2 == -4 (C++ would give -3)
  EXPECT_EQ(out[1].toInt(), 1);   // Python: -7 % 2 == 1
  EXPECT_EQ(out[2].toInt(), -9);
  EXPECT_EQ(out[3].toInt(), -5);
  EXPECT_EQ(out[4].toInt(), 7);
}

TEST(TorchExecutor, ListResultsSplitIntoOutputsAndGetitem) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({4, 6}));
  ir::Node* split = add(g, "aten.split_with_sizes.default",
                        {{"self", Argument::tensor(x)}, {"split_sizes", Argument::ints({2, 4})}, {"dim", Argument::int_(1)}},
                        {OutputSpec{"a"}, OutputSpec{"b"}});
  // A list kept as one value, then indexed by operator.getitem.
  ir::Node* chunks = add(g, "aten.chunk.default", {{"self", Argument::tensor(x)}, {"chunks", Argument::int_(2)}},
                         {OutputSpec{"chunks", ValueKind::Opaque, {}}});
  ir::Node* second = add(g, "operator.getitem",
                         {{"a", Argument::tensor(chunks->output())}, {"b", Argument::int_(1)}});
  g.set_outputs({split->output(0), split->output(1), second->output()});
  at::Tensor input = random_tensor({4, 6}, 2);
  auto out = TorchExecutor(g).run({input});
  EXPECT_TRUE(out[0].toTensor().equal(input.slice(1, 0, 2)));
  EXPECT_TRUE(out[1].toTensor().equal(input.slice(1, 2, 6)));
  EXPECT_TRUE(out[2].toTensor().equal(input.slice(0, 2, 4)));
}

TEST(TorchExecutor, InPlaceOpsMutateIntermediatesButNeverTheCallersInputs) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({3, 5}));
  ir::Node* doubled = add(g, "aten.mul.Scalar", {{"self", Argument::tensor(x)}, {"other", Argument::float_(2.0)}});
  ir::Node* add_ = add(g, "aten.add_.Tensor", {{"self", Argument::tensor(doubled->output())}, {"other", Argument::tensor(x)}});
  ir::Node* relu_ = add(g, "aten.relu_.default", {{"self", Argument::tensor(x)}});
  g.set_outputs({doubled->output(), add_->output(), relu_->output()});
  at::Tensor input = random_tensor({3, 5}, 3);
  at::Tensor keep = input.clone();
  auto out = TorchExecutor(g).run({input});
  // Exact: 2x + x is computed once per element in float either way... only up to rounding, so compare loosely:
  // float32 2x + x vs 3x differ by at most one rounding of |3x| (< 1e-6 for randn values).
  EXPECT_LT(max_abs_diff(out[0].toTensor(), input * 3), 1e-5);
  EXPECT_TRUE(out[0].toTensor().equal(out[1].toTensor()));  // add_ returns its (mutated) self
  EXPECT_TRUE(out[2].toTensor().equal(keep.relu()));
  EXPECT_TRUE(input.equal(keep)) << "relu_ on a graph input must not modify the caller's tensor";
}

TEST(TorchExecutor, OmittedArgumentsTakeLibtorchSchemaDefaults) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({4, 7}));
  ir::Node* mean = add(g, "aten.mean.dim", {{"self", Argument::tensor(x)}, {"dim", Argument::ints({1})}});
  ir::Node* gelu = add(g, "aten.gelu.default", {{"self", Argument::tensor(x)}});
  g.set_outputs({mean->output(), gelu->output()});
  at::Tensor input = random_tensor({4, 7}, 4);
  auto out = TorchExecutor(g).run({input});
  // Same libtorch kernels with the same arguments: bitwise equal.
  EXPECT_TRUE(out[0].toTensor().equal(input.mean({1}, false)));
  EXPECT_TRUE(out[1].toTensor().equal(at::gelu(input)));
}

// Independent SDPA: loops in double precision. mask_kind 0: none, 1: bool, 2: additive float.
at::Tensor sdpa_loops(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                      int mask_kind, bool causal, double scale) {
  auto qd = q.to(at::kDouble).contiguous();
  auto kd = k.to(at::kDouble).contiguous();
  auto vd = v.to(at::kDouble).contiguous();
  int64_t b = q.size(0), h = q.size(1), l = q.size(2), e = q.size(3), s = k.size(2), ev = v.size(3);
  int64_t hk = k.size(1);
  at::Tensor out = at::zeros({b, h, l, ev}, at::kDouble);
  auto Q = qd.accessor<double, 4>();
  auto K = kd.accessor<double, 4>();
  auto V = vd.accessor<double, 4>();
  auto O = out.accessor<double, 4>();
  at::Tensor md = mask_kind == 2 ? mask.to(at::kDouble) : mask;
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t hi = 0; hi < h; ++hi) {
      int64_t kh = hi / (h / hk);
      for (int64_t i = 0; i < l; ++i) {
        std::vector<double> score(s, -INFINITY);
        double best = -INFINITY;
        for (int64_t j = 0; j < s; ++j) {
          if (causal && j > i) continue;
          if (mask_kind == 1 && !mask[i][j].item<bool>()) continue;
          double dot = 0;
          for (int64_t c = 0; c < e; ++c) dot += Q[bi][hi][i][c] * K[bi][kh][j][c];
          score[j] = dot * scale + (mask_kind == 2 ? md[i][j].item<double>() : 0.0);
          best = std::max(best, score[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < s; ++j) sum += score[j] == -INFINITY ? 0 : std::exp(score[j] - best);
        for (int64_t j = 0; j < s; ++j) {
          if (score[j] == -INFINITY) continue;
          double w = std::exp(score[j] - best) / sum;
          for (int64_t c = 0; c < ev; ++c) O[bi][hi][i][c] += w * V[bi][kh][j][c];
        }
      }
    }
  }
  return out;
}

struct SdpaCase {
  int mask_kind;
  bool causal;
  c10::optional<double> scale;
  int64_t kv_heads;
};

class SdpaMapping : public ::testing::TestWithParam<SdpaCase> {};

TEST_P(SdpaMapping, MatchesLoopReference) {
  const SdpaCase c = GetParam();
  const int64_t b = 2, h = 4, l = 5, s = 7, e = 8;
  ir::Graph g;
  ir::Value* q = g.add_input("q", ValueKind::Tensor, meta_of({b, h, l, e}));
  ir::Value* k = g.add_input("k", ValueKind::Tensor, meta_of({b, c.kv_heads, s, e}));
  ir::Value* v = g.add_input("v", ValueKind::Tensor, meta_of({b, c.kv_heads, s, e}));
  std::vector<NamedArgument> args = {{"query", Argument::tensor(q)}, {"key", Argument::tensor(k)},
                                     {"value", Argument::tensor(v)}};
  std::vector<c10::IValue> inputs = {random_tensor({b, h, l, e}, 10), random_tensor({b, c.kv_heads, s, e}, 11),
                                     random_tensor({b, c.kv_heads, s, e}, 12)};
  at::Tensor mask;
  if (c.mask_kind == 1) {
    // Random keep-mask with the diagonal kept so that no row is fully masked.
    mask = random_tensor({l, s}, 13).gt(0).logical_or(at::eye(l, s, at::kBool));
    ir::Value* m = g.add_input("mask", ValueKind::Tensor, meta_of({l, s}, DType::Bool));
    args.push_back({"attn_mask", Argument::tensor(m)});
    inputs.emplace_back(mask);
  } else if (c.mask_kind == 2) {
    mask = random_tensor({l, s}, 14);
    ir::Value* m = g.add_input("mask", ValueKind::Tensor, meta_of({l, s}));
    args.push_back({"attn_mask", Argument::tensor(m)});
    inputs.emplace_back(mask);
  }
  if (c.causal) args.push_back({"is_causal", Argument::bool_(true)});
  if (c.scale) args.push_back({"scale", Argument::float_(*c.scale), true});
  if (c.kv_heads != h) args.push_back({"enable_gqa", Argument::bool_(true), true});
  ir::Node* node = add(g, "aten.scaled_dot_product_attention.default", std::move(args));
  g.set_outputs({node->output()});
  auto out = TorchExecutor(g).run(inputs);
  at::Tensor expected = sdpa_loops(inputs[0].toTensor(), inputs[1].toTensor(), inputs[2].toTensor(), mask,
                                   c.mask_kind, c.causal, c.scale.value_or(1.0 / std::sqrt(double(e))));
  // float32 matmul + softmax over 7 keys of unit-variance data vs a double loop: errors stay below ~1e-6;
  // 1e-5 leaves room for summation-order differences.
  EXPECT_LT(max_abs_diff(out[0].toTensor(), expected), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Variants, SdpaMapping,
                         ::testing::Values(SdpaCase{0, false, c10::nullopt, 4}, SdpaCase{1, false, c10::nullopt, 4},
                                           SdpaCase{2, false, c10::nullopt, 4}, SdpaCase{0, true, c10::nullopt, 4},
                                           SdpaCase{0, false, 0.3, 4}, SdpaCase{2, true, 0.5, 2}));

TEST(TorchExecutor, NativeBatchNormLegitNoTrainingMatchesTheFormula) {
  const int64_t n = 3, c = 4, hw = 5;
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({n, c, hw, hw}));
  at::Tensor w = random_tensor({c}, 21), b = random_tensor({c}, 22), mean = random_tensor({c}, 23);
  at::Tensor var = random_tensor({c}, 24).abs() + 0.5;
  auto constant = [&](const char* name, const at::Tensor& t) {
    return g.add_constant(name, name, ir::ConstantKind::Buffer, from_torch(t));
  };
  ir::Node* bn = add(g, "aten._native_batch_norm_legit_no_training.default",
                     {{"input", Argument::tensor(x)}, {"weight", Argument::tensor(constant("w", w))},
                      {"bias", Argument::tensor(constant("b", b))},
                      {"running_mean", Argument::tensor(constant("m", mean))},
                      {"running_var", Argument::tensor(constant("v", var))}, {"momentum", Argument::float_(0.1)},
                      {"eps", Argument::float_(1e-3)}},
                     {OutputSpec{"y"}, OutputSpec{"unused1"}, OutputSpec{"unused2"}});
  g.set_outputs({bn->output(0)});
  at::Tensor input = random_tensor({n, c, hw, hw}, 25);
  auto out = TorchExecutor(g).run({input});
  auto shape = [](const at::Tensor& t) { return t.to(at::kDouble).view({1, -1, 1, 1}); };
  at::Tensor expected = (input.to(at::kDouble) - shape(mean)) / (shape(var) + 1e-3).sqrt() * shape(w) + shape(b);
  // One float32 normalization per element vs double: relative rounding ~1e-7 on values of order 10.
  EXPECT_LT(max_abs_diff(out[0].toTensor(), expected), 1e-5);
}

TEST(TorchExecutor, SqueezeDimsSqueezesOnlySizeOneDims) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({1, 3, 1, 2}));
  ir::Node* sq = add(g, "aten.squeeze.dims", {{"self", Argument::tensor(x)}, {"dim", Argument::ints({0, 1, -2})}});
  g.set_outputs({sq->output()});
  at::Tensor input = random_tensor({1, 3, 1, 2}, 30);
  auto out = TorchExecutor(g).run({input});
  EXPECT_EQ(out[0].toTensor().sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(out[0].toTensor().equal(input.view({3, 2})));
}

TEST(TorchExecutor, UnknownOpIsUnsupportedAndNamesTheNode) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({2}));
  ir::Node* node = add(g, "aten.no_such_op_anywhere.default", {{"self", Argument::tensor(x)}}, {OutputSpec{"weird"}});
  g.set_outputs({node->output()});
  try {
    TorchExecutor executor(g);
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.context().node, node->name());
    EXPECT_NE(std::string(e.what()).find("aten.no_such_op_anywhere.default"), std::string::npos);
  }
}

TEST(TorchExecutor, LibtorchErrorsBecomeOneLineKilnErrors) {
  // The element count is only known at run time, so the argument checks cannot refuse the view beforehand.
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({SymExpr::symbol("s0"), 3}));
  g.symbol_ranges()["s0"] = ir::SymRange{1, 16};
  ir::Node* view = add(g, "aten.view.default", {{"self", Argument::tensor(x)}, {"size", Argument::ints({4})}},
                       {OutputSpec{"bad_view"}});
  g.set_outputs({view->output()});
  TorchExecutor executor(g);
  try {
    executor.run({random_tensor({2, 3}, 40)});
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.context().node, "bad_view");
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

// Issue 23: aten.conv2d with groups = 2^62 crashed libtorch with SIGFPE (run --reference, and a compiled module
// whose engine build fell back to PyTorch). The argument checks refuse it before libtorch sees it.
TEST(TorchExecutor, ArgumentsThatWouldCrashLibtorchAreRefusedFirst) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({1, 4, 8, 8}));
  ir::Value* w = g.add_input("w", ValueKind::Tensor, meta_of({4, 1, 3, 3}));
  ir::Node* conv = add(g, "aten.conv2d.default",
                       {{"input", Argument::tensor(x)}, {"weight", Argument::tensor(w)}, {"bias", Argument::none()},
                        {"stride", Argument::ints({1, 1})}, {"padding", Argument::ints({1, 1})},
                        {"dilation", Argument::ints({1, 1})}, {"groups", Argument::int_(int64_t{1} << 62)}},
                       {OutputSpec{"conv"}});
  g.set_outputs({conv->output()});
  try {
    TorchExecutor executor(g);
    executor.run({random_tensor({1, 4, 8, 8}, 60), random_tensor({4, 1, 3, 3}, 61)});
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    EXPECT_EQ(e.context().node, "conv");
    EXPECT_NE(std::string(e.what()).find("groups"), std::string::npos) << e.what();
  }
}

// An argument of the wrong kind for an op Kiln's schema table lacks reaches libtorch's own schema: refused there
// by name (libtorch's boxed kernels assert on it: "INTERNAL ASSERT FAILED ... please report a bug to PyTorch").
TEST(TorchExecutor, ArgumentKindsMustFitLibtorchsSchema) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({2, 3}));
  ir::Node* node = add(g, "aten.softshrink.default", {{"self", Argument::tensor(x)}, {"lambd", Argument::string("half")}},
                       {OutputSpec{"shrunk"}});
  g.set_outputs({node->output()});
  try {
    TorchExecutor executor(g);
    executor.run({random_tensor({2, 3}, 62)});
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    EXPECT_EQ(e.context().node, "shrunk");
    EXPECT_NE(std::string(e.what()).find("'lambd'"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("INTERNAL ASSERT"), std::string::npos) << e.what();
  }
}

TEST(TorchExecutor, InputsAreCheckedAgainstTheProgram) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({SymExpr::symbol("s0"), 3}));
  g.symbol_ranges()["s0"] = ir::SymRange{2, 8};
  ir::Node* relu = add(g, "aten.relu.default", {{"self", Argument::tensor(x)}});
  g.set_outputs({relu->output()});
  TorchExecutor executor(g);
  EXPECT_NO_THROW(executor.run({random_tensor({4, 3}, 50)}));
  EXPECT_THROW(executor.run({random_tensor({4, 5}, 50)}), Error);       // static dim differs
  EXPECT_THROW(executor.run({random_tensor({9, 3}, 50)}), Error);       // symbol above its range
  EXPECT_THROW(executor.run({random_tensor({4, 3, 1}, 50)}), Error);    // rank differs
  EXPECT_THROW(executor.run({at::ones({4, 3}, at::kLong)}), Error);     // dtype differs
  EXPECT_THROW(executor.run({}), Error);                                // count differs
}

TEST(Reference, HostTensorsRoundTripThroughTorch) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-100, 100);
  for (DType dtype : kAllDTypes) {
    HostTensor t(dtype, {3, 4});
    for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, std::round(dist(rng)) / 4);
    HostTensor back = from_torch(to_torch(t));
    ASSERT_EQ(back.dtype(), dtype);
    ASSERT_EQ(back.sizes(), t.sizes());
    for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(back.get_as_double(i), t.get_as_double(i)) << dtype_name(dtype);
  }
  // Non-contiguous views are copied densely.
  at::Tensor base = random_tensor({4, 6}, 60);
  HostTensor transposed = from_torch(base.t());
  EXPECT_EQ(transposed.sizes(), (std::vector<int64_t>{6, 4}));
  EXPECT_TRUE(to_torch(transposed).equal(base.t().contiguous()));
}

TEST(Reference, RunReferenceTakesAndReturnsHostTensors) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ValueKind::Tensor, meta_of({2, 3}));
  ir::Node* size = add(g, "aten.sym_size.int", {{"self", Argument::tensor(x)}, {"dim", Argument::int_(1)}},
                       {OutputSpec{"n", ValueKind::SymInt, {}}});
  ir::Node* neg = add(g, "aten.neg.default", {{"self", Argument::tensor(x)}});
  g.set_outputs({neg->output(), size->output()});
  HostTensor input = HostTensor::from_floats({1.5f, -2, 3, -4, 5, 6.25f}, {2, 3});
  auto out = run_in_libtorch(g, {input});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].get_as_double(5), -6.25);
  EXPECT_EQ(out[1].dtype(), DType::Int64);
  EXPECT_EQ(out[1].get_as_double(0), 3);
}

}  // namespace
}  // namespace kiln::runtime
