// libtorch side of the benchmark pairs: the same ops, eager, same thread count (the argument), same weights.

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "engine_cpu/bench_data.h"

namespace kiln::bench {
namespace {

torch::Tensor to_torch(std::vector<float>& v, std::vector<int64_t> d) {
  return torch::from_blob(v.data(), d, torch::kFloat32).clone();
}

void BM_Torch_ResNetBasicBlock(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  torch::NoGradGuard no_grad;
  BlockWeights w;
  auto k1 = to_torch(w.k1, {kBlockC, kBlockC, 3, 3}), b1 = to_torch(w.b1, {kBlockC});
  auto k2 = to_torch(w.k2, {kBlockC, kBlockC, 3, 3}), b2 = to_torch(w.b2, {kBlockC});
  auto x = to_torch(w.x, {1, kBlockC, kBlockHW, kBlockHW});
  for (auto _ : state) {
    auto y = torch::relu(torch::conv2d(x, k1, b1, 1, 1));
    y = torch::relu(torch::conv2d(y, k2, b2, 1, 1) + x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}
BENCHMARK(BM_Torch_ResNetBasicBlock)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Torch_Conv3x3(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  torch::NoGradGuard no_grad;
  BlockWeights w;
  auto k1 = to_torch(w.k1, {kBlockC, kBlockC, 3, 3}), b1 = to_torch(w.b1, {kBlockC});
  auto x = to_torch(w.x, {1, kBlockC, kBlockHW, kBlockHW});
  for (auto _ : state) {
    auto y = torch::conv2d(x, k1, b1, 1, 1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}
BENCHMARK(BM_Torch_Conv3x3)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Torch_TransformerMlp(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  torch::NoGradGuard no_grad;
  MlpWeights w;
  auto w1 = to_torch(w.w1, {kHidden, kModel}), b1 = to_torch(w.b1, {kHidden});
  auto w2 = to_torch(w.w2, {kModel, kHidden}), b2 = to_torch(w.b2, {kModel});
  auto g = to_torch(w.gamma, {kModel}), be = to_torch(w.beta, {kModel});
  auto x = to_torch(w.x, {kTokens, kModel});
  for (auto _ : state) {
    auto h = torch::gelu(torch::linear(x, w1, b1));
    h = torch::linear(h, w2, b2) + x;
    h = torch::layer_norm(h, {kModel}, g, be, 1e-5);
    benchmark::DoNotOptimize(h.data_ptr());
  }
}
BENCHMARK(BM_Torch_TransformerMlp)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Torch_MatMul(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  torch::NoGradGuard no_grad;
  MlpWeights w;
  auto w1 = to_torch(w.w1, {kHidden, kModel});
  auto x = to_torch(w.x, {kTokens, kModel});
  for (auto _ : state) {
    auto y = torch::matmul(x, w1.t());
    benchmark::DoNotOptimize(y.data_ptr());
  }
}
BENCHMARK(BM_Torch_MatMul)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kiln::bench
