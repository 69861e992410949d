// Engine side of the benchmark pairs: each case builds a network once per thread count (the argument), then
// times ExecutionContext::execute. The label lists the plan's layers as name:tactic.

#include <benchmark/benchmark.h>

#include <cstring>
#include <functional>
#include <map>

#include "engine_cpu/bench_data.h"
#include "kiln/engine/builder.h"
#include "kiln/engine/execution_context.h"
#include "kiln/support/logging.h"

namespace kiln::bench {
namespace {
using namespace kiln::engine;

HostTensor tensor(const std::vector<float>& v, Dims d) { return HostTensor::from_floats(v, std::move(d)); }

/// Builds once per case and thread count: Google Benchmark calls a case several times while it sizes the
/// iteration count.
std::shared_ptr<Plan> cached_plan(const char* name, int threads, const std::function<std::shared_ptr<Plan>(int)>& make) {
  static std::map<std::pair<std::string, int>, std::shared_ptr<Plan>> plans;
  auto& p = plans[{name, threads}];
  if (!p) p = make(threads);
  return p;
}

std::string plan_label(const Plan& plan) {
  std::string s;
  for (const auto& l : plan.layers()) s += (s.empty() ? "" : " ") + l.name + ":" + l.tactic;
  return s;
}

std::shared_ptr<Plan> build_plan(const Network& net, int threads, bool int8 = false) {
  BuilderConfig config;
  config.threads = threads;
  config.timing_iterations = 5;
  if (int8) {
    config.precisions = {Precision::FP32, Precision::INT8};
    config.int8_first_last = true;  // (the network's only layer is its first and last)
  }
  auto plan = Builder(config).build(net);
  for (const auto& l : plan->layers()) KILN_INFO("bench plan: ", l.name, " ", layer_kind_name(l.kind), " tactic ", l.tactic);
  return plan;
}

void run_plan(benchmark::State& state, const std::shared_ptr<Plan>& plan, const HostTensor& x, Dims out_dims) {
  state.SetLabel(plan_label(*plan));
  ExecutionContext ctx(plan);
  HostTensor out(DType::Float32, out_dims);
  ctx.set_input_shape("x", x.sizes());
  ctx.set_tensor_address("x", const_cast<uint8_t*>(x.data()));
  ctx.set_tensor_address("y", out.mutable_data());
  for (auto _ : state) {
    ctx.execute();
    benchmark::DoNotOptimize(out.data());
  }
}

std::shared_ptr<Plan> resnet_block_plan(int threads) {
  BlockWeights w;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, kBlockC, kBlockHW, kBlockHW});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv1", x, tensor(w.k1, {kBlockC, kBlockC, 3, 3}), tensor(w.b1, {kBlockC}), p);
  y = net.add_activation("relu1", y, ActivationKind::Relu);
  y = net.add_convolution("conv2", y, tensor(w.k2, {kBlockC, kBlockC, 3, 3}), tensor(w.b2, {kBlockC}), p);
  y = net.add_elementwise("add", y, x, ElementwiseOp::Add);
  y = net.add_activation("relu2", y, ActivationKind::Relu);
  y->set_name("y");
  net.mark_output(y);
  return build_plan(net, threads);
}

void BM_Kiln_ResNetBasicBlock(benchmark::State& state) {
  std::shared_ptr<Plan> plan = cached_plan("ResNetBasicBlock", static_cast<int>(state.range(0)), resnet_block_plan);
  BlockWeights w;
  run_plan(state, plan, tensor(w.x, {1, kBlockC, kBlockHW, kBlockHW}), {1, kBlockC, kBlockHW, kBlockHW});
}
BENCHMARK(BM_Kiln_ResNetBasicBlock)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

/// A 3x3 convolution of the block's shape. With `int8`, x has the signed range of its values and the build may
/// choose the INT8 tactic (timed against the fp32 ones).
std::shared_ptr<Plan> conv_plan(int threads, bool int8) {
  BlockWeights w;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, kBlockC, kBlockHW, kBlockHW});
  if (int8) x->set_dynamic_range(-1.0f, 1.0f);
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv", x, tensor(w.k1, {kBlockC, kBlockC, 3, 3}), tensor(w.b1, {kBlockC}), p);
  y->set_name("y");
  net.mark_output(y);
  return build_plan(net, threads, int8);
}

void BM_Kiln_Conv3x3(benchmark::State& state) {
  std::shared_ptr<Plan> plan =
      cached_plan("Conv3x3", static_cast<int>(state.range(0)), [](int t) { return conv_plan(t, false); });
  BlockWeights w;
  run_plan(state, plan, tensor(w.x, {1, kBlockC, kBlockHW, kBlockHW}), {1, kBlockC, kBlockHW, kBlockHW});
}
BENCHMARK(BM_Kiln_Conv3x3)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Kiln_Conv3x3Int8SignedInput(benchmark::State& state) {
  std::shared_ptr<Plan> plan =
      cached_plan("Conv3x3Int8", static_cast<int>(state.range(0)), [](int t) { return conv_plan(t, true); });
  BlockWeights w;
  run_plan(state, plan, tensor(w.x, {1, kBlockC, kBlockHW, kBlockHW}), {1, kBlockC, kBlockHW, kBlockHW});
}
BENCHMARK(BM_Kiln_Conv3x3Int8SignedInput)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

/// linear(x) = x W^T + b as matrix multiply with transpose_b over the [out, in] weight.
Tensor* linear(Network& net, const std::string& name, Tensor* x, const std::vector<float>& w, const std::vector<float>& b,
               int64_t out, int64_t in) {
  Tensor* wt = net.add_constant(name + ".weight", Weights(name + ".weight", tensor(w, {out, in})));
  Tensor* y = net.add_matrix_multiply(name, x, false, wt, true);
  return net.add_elementwise(name + "_bias", y, net.add_constant(name + ".bias", Weights(name + ".bias", tensor(b, {out}))),
                             ElementwiseOp::Add);
}

std::shared_ptr<Plan> mlp_plan(int threads) {
  MlpWeights w;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {kTokens, kModel});
  Tensor* h = linear(net, "fc1", x, w.w1, w.b1, kHidden, kModel);
  h = net.add_activation("gelu", h, ActivationKind::GeluErf);
  h = linear(net, "fc2", h, w.w2, w.b2, kModel, kHidden);
  h = net.add_elementwise("residual", h, x, ElementwiseOp::Add);
  NormalizationParams np;
  np.axis = 1;
  h = net.add_normalization("ln", h, np, tensor(w.gamma, {kModel}), tensor(w.beta, {kModel}));
  h->set_name("y");
  net.mark_output(h);
  return build_plan(net, threads);
}

void BM_Kiln_TransformerMlp(benchmark::State& state) {
  std::shared_ptr<Plan> plan = cached_plan("TransformerMlp", static_cast<int>(state.range(0)), mlp_plan);
  MlpWeights w;
  run_plan(state, plan, tensor(w.x, {kTokens, kModel}), {kTokens, kModel});
}
BENCHMARK(BM_Kiln_TransformerMlp)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

/// x [tokens, model] times W^T [model, hidden]: the FFN-in GEMM of BERT-base at sequence 128. With `int8`, x has
/// the signed range of its values ([-1, 1]) and the build may choose the INT8 tactic (timed against fp32).
std::shared_ptr<Plan> matmul_plan(int threads, bool int8) {
  MlpWeights w;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {kTokens, kModel});
  if (int8) x->set_dynamic_range(-1.0f, 1.0f);
  Tensor* wt = net.add_constant("w", tensor(w.w1, {kHidden, kModel}));
  Tensor* y = net.add_matrix_multiply("mm", x, false, wt, true);
  y->set_name("y");
  net.mark_output(y);
  return build_plan(net, threads, int8);
}

void BM_Kiln_MatMul(benchmark::State& state) {
  std::shared_ptr<Plan> plan =
      cached_plan("MatMul", static_cast<int>(state.range(0)), [](int t) { return matmul_plan(t, false); });
  MlpWeights w;
  run_plan(state, plan, tensor(w.x, {kTokens, kModel}), {kTokens, kHidden});
}
BENCHMARK(BM_Kiln_MatMul)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Kiln_MatMulInt8SignedInput(benchmark::State& state) {
  std::shared_ptr<Plan> plan =
      cached_plan("MatMulInt8", static_cast<int>(state.range(0)), [](int t) { return matmul_plan(t, true); });
  MlpWeights w;
  run_plan(state, plan, tensor(w.x, {kTokens, kModel}), {kTokens, kHidden});
}
BENCHMARK(BM_Kiln_MatMulInt8SignedInput)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kiln::bench
