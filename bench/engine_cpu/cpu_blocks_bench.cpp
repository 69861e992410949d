// The two CPU targets of the engine issue, each built as an engine Network and run through Builder +
// ExecutionContext, paired with libtorch eager doing the same ops in the same process at the same thread
// count (the benchmark argument):
//   ResNetBlock: conv3x3-bias-relu-conv3x3-bias-add-relu, 64 channels, 56x56, batch 1 (bn folded into conv);
//   MlpBlock:    linear(768->3072)-gelu-linear(3072->768) + residual + layer norm, 128 tokens.
// Linked into kiln_bench_engine_cpu with the libtorch cases (main.cpp is the entry point). Run:
//   kiln_bench_engine_cpu --benchmark_filter='(Kiln|Torch)(ResNet|Mlp)Block' --benchmark_repetitions=5
// and compare each Kiln* case with the Torch* case of the same block and thread count.

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <filesystem>
#include <memory>
#include <string>
#include <random>
#include <vector>

#include "kiln/engine/builder.h"
#include "kiln/engine/execution_context.h"
#include "kiln/engine/network.h"

namespace {

using namespace kiln;
using namespace kiln::engine;

HostTensor random_host(const std::vector<int64_t>& dims, uint32_t seed, float range) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-range, range);
  int64_t n = 1;
  for (int64_t v : dims) n *= v;
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = d(gen);
  return HostTensor::from_floats(values, dims);
}

torch::Tensor to_torch(const HostTensor& t) {
  return torch::from_blob(const_cast<uint8_t*>(t.data()), t.sizes(), torch::kFloat32).clone();
}

/// One engine plan with its context and bound host buffers.
struct KilnRun {
  std::shared_ptr<Plan> plan;
  std::unique_ptr<ExecutionContext> ctx;
  std::vector<float> out;

  KilnRun(const Network& net, int threads, HostTensor& input, const Dims& out_dims) {
    BuilderConfig cfg;
    cfg.threads = threads;
    cfg.timing_iterations = 5;
    // Time the candidates (including the slow reference kernels) once, not in every repetition.
    cfg.timing_cache_path = (std::filesystem::temp_directory_path() / "kiln_bench_cpu_blocks.timing").string();
    plan = Builder(cfg).build(net);
    ctx = std::make_unique<ExecutionContext>(plan);
    ctx->set_input_shape("x", input.sizes());
    ctx->set_tensor_address("x", input.mutable_data());
    int64_t n = 1;
    for (int64_t v : out_dims) n *= v;
    out.resize(static_cast<size_t>(n));
    ctx->set_tensor_address("y", out.data());
  }

  /// "conv1:onednn_blocked conv2:..." (the tactics the builder chose), shown as the benchmark label.
  std::string tactics() const {
    std::string s;
    for (const auto& l : plan->layers()) s += (s.empty() ? "" : " ") + l.name + ":" + l.tactic;
    return s;
  }
};

struct ResNetWeights {
  HostTensor x = random_host({1, 64, 56, 56}, 1, 1.0f);
  HostTensor w1 = random_host({64, 64, 3, 3}, 2, 0.05f), b1 = random_host({64}, 3, 0.1f);
  HostTensor w2 = random_host({64, 64, 3, 3}, 4, 0.05f), b2 = random_host({64}, 5, 0.1f);
};

void build_resnet(Network& net, ResNetWeights& w) {
  Tensor* x = net.add_input("x", DType::Float32, {1, 64, 56, 56});
  ConvolutionParams p;
  p.pre_padding = {1, 1};
  p.post_padding = {1, 1};
  Tensor* c1 = net.add_convolution("conv1", x, Weights("conv1.weight", w.w1), Weights("conv1.bias", w.b1), p);
  Tensor* r1 = net.add_activation("relu1", c1, ActivationKind::Relu);
  Tensor* c2 = net.add_convolution("conv2", r1, Weights("conv2.weight", w.w2), Weights("conv2.bias", w.b2), p);
  Tensor* s = net.add_elementwise("add", c2, x, ElementwiseOp::Add);
  Tensor* y = net.add_activation("relu2", s, ActivationKind::Relu);
  y->set_name("y");
  net.mark_output(y);
}

void KilnResNetBlock(benchmark::State& state) {
  ResNetWeights w;
  Network net;
  build_resnet(net, w);
  KilnRun run(net, static_cast<int>(state.range(0)), w.x, {1, 64, 56, 56});
  state.SetLabel(run.tactics());
  for (auto _ : state) run.ctx->execute();
  benchmark::DoNotOptimize(run.out.data());
}

void TorchResNetBlock(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  c10::InferenceMode guard;
  ResNetWeights w;
  torch::Tensor x = to_torch(w.x), w1 = to_torch(w.w1), b1 = to_torch(w.b1), w2 = to_torch(w.w2),
                b2 = to_torch(w.b2);
  for (auto _ : state) {
    torch::Tensor h = at::conv2d(x, w1, b1, 1, 1);
    h.relu_();
    torch::Tensor y = at::conv2d(h, w2, b2, 1, 1);
    y.add_(x).relu_();
    benchmark::DoNotOptimize(y.data_ptr());
  }
}

struct MlpWeights {
  HostTensor x = random_host({1, 128, 768}, 11, 1.0f);
  HostTensor w1 = random_host({3072, 768}, 12, 0.04f), b1 = random_host({3072}, 13, 0.1f);
  HostTensor w2 = random_host({768, 3072}, 14, 0.02f), b2 = random_host({768}, 15, 0.1f);
  HostTensor gamma = random_host({768}, 16, 1.0f), beta = random_host({768}, 17, 0.1f);
};

void build_mlp(Network& net, MlpWeights& w) {
  Tensor* x = net.add_input("x", DType::Float32, {1, 128, 768});
  Tensor* w1 = net.add_constant("fc1.weight", Weights("fc1.weight", w.w1));
  Tensor* b1 = net.add_constant("fc1.bias", Weights("fc1.bias", w.b1));
  Tensor* w2 = net.add_constant("fc2.weight", Weights("fc2.weight", w.w2));
  Tensor* b2 = net.add_constant("fc2.bias", Weights("fc2.bias", w.b2));
  Tensor* h = net.add_matrix_multiply("fc1", x, false, w1, true);
  h = net.add_elementwise("fc1_bias", h, b1, ElementwiseOp::Add);
  h = net.add_activation("gelu", h, ActivationKind::GeluErf);
  Tensor* o = net.add_matrix_multiply("fc2", h, false, w2, true);
  o = net.add_elementwise("fc2_bias", o, b2, ElementwiseOp::Add);
  o = net.add_elementwise("residual", o, x, ElementwiseOp::Add);
  NormalizationParams np;
  np.kind = NormalizationParams::Layer;
  np.axis = 2;
  Tensor* y = net.add_normalization("ln", o, np, Weights("ln.weight", w.gamma), Weights("ln.bias", w.beta));
  y->set_name("y");
  net.mark_output(y);
}

void KilnMlpBlock(benchmark::State& state) {
  MlpWeights w;
  Network net;
  build_mlp(net, w);
  KilnRun run(net, static_cast<int>(state.range(0)), w.x, {1, 128, 768});
  state.SetLabel(run.tactics());
  for (auto _ : state) run.ctx->execute();
  benchmark::DoNotOptimize(run.out.data());
}

void TorchMlpBlock(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  c10::InferenceMode guard;
  MlpWeights w;
  torch::Tensor x = to_torch(w.x), w1 = to_torch(w.w1), b1 = to_torch(w.b1), w2 = to_torch(w.w2),
                b2 = to_torch(w.b2), g = to_torch(w.gamma), be = to_torch(w.beta);
  for (auto _ : state) {
    torch::Tensor h = at::gelu(at::linear(x, w1, b1));
    torch::Tensor o = at::linear(h, w2, b2);
    o.add_(x);
    torch::Tensor y = at::layer_norm(o, {768}, g, be, 1e-5);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}

// Interleaved so each Kiln/Torch pair runs close together in time (the machine is shared).
BENCHMARK(KilnResNetBlock)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(TorchResNetBlock)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(KilnMlpBlock)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(TorchMlpBlock)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
