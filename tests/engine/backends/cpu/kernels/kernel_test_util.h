#pragma once
// Helpers for the fast CPU kernel tests: build a one-layer LayerInfo, run a named tactic and the reference
// kernel on the same random inputs, compare.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/ops/reference.h"
#include "engine/ops/shape_inference.h"
#include "kiln/engine/ops/tensor_format.h"
#include "kiln/engine/thread_pool.h"

namespace kiln::engine::cpu::testing {

/// Deterministic uniform values in [lo, hi).
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

inline int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

inline HostTensor random_tensor(const Dims& dims, uint32_t seed) {
  return HostTensor::from_floats(random_floats(static_cast<size_t>(numel(dims)), seed), dims);
}

/// `plain` (dims `d`) stored in `format`; padded lanes zero.
inline std::vector<float> to_format(const std::vector<float>& plain, const Dims& d, TensorFormat format) {
  std::vector<float> out(static_cast<size_t>(format_numel(format, d)), 0.0f);
  std::vector<int64_t> index(d.size(), 0);
  for (size_t i = 0; i < plain.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i);
    for (size_t k = d.size(); k-- > 0;) index[k] = rest % d[k], rest /= d[k];
    out[static_cast<size_t>(format_offset(format, d, index))] = plain[i];
  }
  return out;
}

/// The plain values of `stored` (dims `d` in `format`).
inline std::vector<float> from_format(const std::vector<float>& stored, const Dims& d, TensorFormat format) {
  std::vector<float> out(static_cast<size_t>(numel(d)));
  std::vector<int64_t> index(d.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i);
    for (size_t k = d.size(); k-- > 0;) index[k] = rest % d[k], rest /= d[k];
    out[i] = stored[static_cast<size_t>(format_offset(format, d, index))];
  }
  return out;
}

/// One layer plus fp32 inputs of given dims; `build_dims` are the dims the kernel is created for (the
/// profile's opt shape), which may differ from the dims it then runs with.
struct OneLayer {
  Layer layer;
  std::vector<Dims> input_dims;

  /// Output dims for `dims` (one per input) by shape inference.
  Dims output_dims(const std::vector<Dims>& dims) const {
    std::vector<ShapeIn> in;
    for (const Dims& d : dims) in.push_back(ShapeIn{DType::Float32, d, nullptr});
    return infer_shapes(layer, in).at(0).dims;
  }

  LayerInfo info(const std::vector<Dims>& dims) const {
    LayerInfo li;
    li.layer = &layer;
    for (const Dims& d : dims) li.inputs.push_back(TensorInfo{"in", DType::Float32, d, d, d});
    Dims y = output_dims(dims);
    li.outputs.push_back(TensorInfo{"out", DType::Float32, y, y, y});
    return li;
  }
};

/// Runs `kernel` (already created) on `inputs` with a pool of `threads`; returns the output values.
inline std::vector<float> run(const Kernel& kernel, KernelState* state, const OneLayer& l,
                              std::vector<std::vector<float>>& inputs, const std::vector<Dims>& dims,
                              ThreadPool* pool) {
  KernelArgs args;
  for (size_t i = 0; i < inputs.size(); ++i) args.inputs.push_back(TensorView{inputs[i].data(), DType::Float32, dims[i]});
  Dims y = l.output_dims(dims);
  std::vector<float> out(static_cast<size_t>(numel(y)), std::nanf(""));
  args.outputs.push_back(TensorView{out.data(), DType::Float32, y});
  std::vector<uint8_t> ws(kernel.workspace_size() + 64);
  args.workspace = ws.data();
  args.workspace_size = kernel.workspace_size();
  args.pool = pool;
  args.state = state;
  kernel.execute(args);
  return out;
}

/// The reference kernel's output.
inline std::vector<float> run_reference(const OneLayer& l, std::vector<std::vector<float>>& inputs,
                                        const std::vector<Dims>& dims) {
  KernelArgs args;
  for (size_t i = 0; i < inputs.size(); ++i) args.inputs.push_back(TensorView{inputs[i].data(), DType::Float32, dims[i]});
  Dims y = l.output_dims(dims);
  std::vector<float> out(static_cast<size_t>(numel(y)), std::nanf(""));
  args.outputs.push_back(TensorView{out.data(), DType::Float32, y});
  ops::execute(l.layer, args);
  return out;
}

/// An activation post-op.
inline PostOp act(ActivationKind k, double alpha = 0, double beta = 0) {
  PostOp op;
  op.kind = PostOp::Activation;
  op.activation = ActivationParams{k, alpha, beta};
  return op;
}

/// The CPU table row (kind, name); fails the test when missing.
inline const KernelRow& row(LayerKind kind, const std::string& name) {
  const KernelRow* f = cpu_kernels().find(kind, name);
  if (!f) throw std::runtime_error("no CPU kernel row " + name);
  return *f;
}

/// Elementwise |a - b| <= atol + rtol * |b| (numpy allclose), reporting the first mismatch.
inline void expect_allclose(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                            double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= atol + rtol * std::fabs(static_cast<double>(want[i])))) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
      return;
    }
  }
}

/// Creates the tactic `name` for `l` built at `build_dims`, runs it at each of `run_dims` (random inputs,
/// seeded) with 1 and 2 threads and compares with the reference kernel.
inline void check_against_reference(const OneLayer& l, const std::string& name, const std::vector<Dims>& build_dims,
                                    const std::vector<std::vector<Dims>>& run_dims, double rtol, double atol,
                                    const std::string& what) {
  LayerInfo info = l.info(build_dims);
  const KernelRow& f = row(l.layer.kind, name);
  ASSERT_TRUE(f.runs(info, nullptr)) << what << ": tactic " << name << " does not apply";
  auto kernel = f.create(info);
  // 16 threads too: oneDNN picks its work split for the thread count (the GPU machine has 16 cores).
  for (int threads : {1, 2, 16}) {
    ThreadPool pool(threads);
    auto state = kernel->create_state();
    uint32_t seed = 100;
    for (const auto& dims : run_dims) {
      std::vector<std::vector<float>> inputs;
      for (const Dims& d : dims) inputs.push_back(random_floats(static_cast<size_t>(numel(d)), seed++));
      auto want = run_reference(l, inputs, dims);
      auto got = run(*kernel, state.get(), l, inputs, dims, &pool);
      expect_allclose(got, want, rtol, atol, what + " [" + name + ", " + std::to_string(threads) + " threads]");
    }
  }
}

}  // namespace kiln::engine::cpu::testing
