#pragma once
// What the cuda convolution and channels-last tests share (nhwc_test.cpp, conv_graph_test.cpp,
// follow_channels_last_test.cpp): post-ops, a single test layer and its LayerInfo, kernel rows, host tensors
// in a format, running one kernel, the scaled comparison and its tolerances (nhwc_test.cpp's file comment
// says why), build configurations and a plan's description.

#if KILN_HAVE_CUDA

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine::cuda_conv_test {

constexpr TensorFormat kCl = TensorFormat::ChannelsLast, kPlain = TensorFormat::Plain;
using namespace testing;

inline PostOp relu_op() {
  PostOp op;
  op.kind = PostOp::Activation;
  op.activation.kind = ActivationKind::Relu;
  return op;
}

inline PostOp sum_op(double scale = 1.0) {
  PostOp op;
  op.kind = PostOp::Sum;
  op.scale = scale;
  return op;
}

/// A layer with static tensors, and the LayerInfo a backend sees (it points into the layer).
struct TestLayer {
  Layer layer;
  LayerInfo info;
  TestLayer(LayerKind kind, LayerParams params, const std::vector<std::pair<Dims, TensorFormat>>& inputs,
            const std::pair<Dims, TensorFormat>& output, DType dtype) {
    layer.name = "test_layer";
    layer.kind = kind;
    layer.params = std::move(params);
    for (size_t i = 0; i < inputs.size(); ++i) {
      layer.inputs.push_back(static_cast<int64_t>(i));
      const Dims& d = inputs[i].first;
      info.inputs.push_back({"in" + std::to_string(i), dtype, d, d, d, inputs[i].second});
    }
    layer.outputs = {static_cast<int64_t>(inputs.size())};
    info.outputs.push_back({"out", dtype, output.first, output.first, output.first, output.second});
    info.layer = &layer;
  }
  TestLayer(const TestLayer&) = delete;
};

inline const KernelRow* row(LayerKind kind, const std::string& name) {
  return cuda::cuda_kernels().find(kind, name);
}

inline std::vector<std::string> row_names(LayerKind kind) {
  std::vector<std::string> names;
  for (const auto& r : cuda::cuda_kernels().rows()) {
    if (r.kind == kind) names.push_back(r.name);
  }
  return names;
}

/// A 2-D convolution layer [n, c, h, w] -> [n, k, oh, ow] with 3x3 weights, `residuals` residual inputs.
inline std::unique_ptr<TestLayer> conv_layer(DType dt, ConvolutionParams p, int residuals, TensorFormat f,
                                             bool bias, int rank = 4) {
  Dims x = rank == 4 ? Dims{2, 8, 9, 9} : Dims{2, 8, 9}, y = rank == 4 ? Dims{2, 16, 9, 9} : Dims{2, 16, 9};
  std::vector<std::pair<Dims, TensorFormat>> ins = {{x, f}};
  for (int i = 0; i < residuals; ++i) ins.push_back({y, f});
  auto t = std::make_unique<TestLayer>(LayerKind::Convolution, p, ins, std::make_pair(y, f), dt);
  std::mt19937 rng(5);
  t->layer.weights.push_back(
      Weights(random_tensor(DType::Float32, rank == 4 ? Dims{16, 8, 3, 3} : Dims{16, 8, 3}, rng)));
  if (bias) t->layer.weights.push_back(Weights(random_tensor(DType::Float32, {16}, rng)));
  return t;
}

inline ConvolutionParams pad1(int spatial = 2) {
  ConvolutionParams p;
  p.pre_padding = p.post_padding = std::vector<int64_t>(spatial, 1);
  return p;
}

/// `t` (logical dims, dense) stored in `format`, and back.
inline HostTensor to_format(const HostTensor& t, TensorFormat format) {
  HostTensor out(t.dtype(), t.sizes());
  size_t es = dtype_size(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t o = format_offset(format, t.sizes(), unravel(i, t.sizes()));
    std::memcpy(out.mutable_data() + o * es, t.data() + i * es, es);
  }
  return out;
}
inline HostTensor from_format(const HostTensor& t, TensorFormat format) {
  HostTensor out(t.dtype(), t.sizes());
  size_t es = dtype_size(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t o = format_offset(format, t.sizes(), unravel(i, t.sizes()));
    std::memcpy(out.mutable_data() + i * es, t.data() + o * es, es);
  }
  return out;
}

inline bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

/// Runs a kernel once on host tensors already stored in their views' formats; returns the output bytes.
/// `offset`: bytes every input and the output start past their buffer's (cudaMalloc'd, 256-byte aligned)
/// start, as a view into a larger tensor would.
inline HostTensor run_kernel(const Kernel& k, const std::vector<TensorView>& in_views,
                             const std::vector<HostTensor>& in, TensorView out_view, size_t offset = 0) {
  const Backend& b = *shared_backend("cuda");
  DeviceBuffers dev{&b, {}};
  KernelArgs args;
  for (size_t i = 0; i < in.size(); ++i) {
    TensorView v = in_views[i];
    v.data = static_cast<char*>(dev.add(in[i].nbytes() + offset)) + offset;
    b.copy(v.data, in[i].data(), in[i].nbytes(), CopyKind::HostToDevice, nullptr);
    args.inputs.push_back(v);
    args.input_values.push_back(nullptr);
  }
  out_view.data = static_cast<char*>(dev.add(out_view.nbytes() + offset)) + offset;
  args.outputs.push_back(out_view);
  args.workspace = dev.add(k.workspace_size());
  args.workspace_size = k.workspace_size();
  std::unique_ptr<KernelState> state = k.create_state();
  args.state = state.get();
  k.execute(args);
  HostTensor out(out_view.dtype, out_view.dims);
  b.copy(out.mutable_data(), out_view.data, out.nbytes(), CopyKind::DeviceToHost, nullptr);
  b.synchronize(nullptr);
  return out;
}

/// max |got - want| <= tol * max |want| (the file comment's tolerance).
inline void expect_near_scaled(const HostTensor& got, const HostTensor& want, double tol,
                               const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  double scale = 0, worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, std::fabs(want.get_as_double(i)));
  for (int64_t i = 0; i < want.numel(); ++i) {
    double e = std::fabs(got.get_as_double(i) - want.get_as_double(i));
    if (!(e <= worst)) worst = e, at = i;
  }
  EXPECT_GT(scale, 0) << what << ": all-zero reference";
  EXPECT_LE(worst, tol * scale) << what << ": max error " << worst << " at [" << at << "], reference max "
                                << scale;
}

/// One rounding of the dtype, relative (fp32 2^-23, fp16 2^-10, bf16 2^-7, rounded up): a result rounded once
/// from the exact value, compared with the exact value rounded to the dtype.
inline double dtype_rounding(DType dt) {
  return dt == DType::Float32 ? 1.2e-7 : dt == DType::Float16 ? 9.8e-4 : 7.9e-3;
}
inline double tolerance(DType dt) { return dt == DType::Float32 ? 1e-4 : dt == DType::Float16 ? 1e-2 : 2e-2; }

/// A residual convolution layer (conv_layer with [Sum, ReLU], a bias, one residual) with random x and r
/// stored in `f`, ready for run_kernel.
struct ResidualConvCase {
  std::unique_ptr<TestLayer> t;
  std::vector<HostTensor> in;     // x and r, stored in the format
  std::vector<TensorView> views;  // their views (no data)
  TensorView out;                 // the output's view (no data)
  ResidualConvCase(DType dt, TensorFormat f, std::mt19937& rng) {
    ConvolutionParams p = pad1();
    p.post_ops = {sum_op(), relu_op()};
    t = conv_layer(dt, p, 1, f, true);
    HostTensor x = random_tensor(dt, t->info.inputs[0].opt, rng),
               r = random_tensor(dt, t->info.inputs[1].opt, rng);
    in = {to_format(x, f), to_format(r, f)};
    views = {TensorView{nullptr, dt, x.sizes(), f}, TensorView{nullptr, dt, r.sizes(), f}};
    out = TensorView{nullptr, dt, t->info.outputs[0].opt, f};
  }
};

inline BuilderConfig config_for(const std::string& backend, DType dt, bool timed) {
  BuilderConfig c;
  c.backend = backend;
  if (!timed) c.timing_iterations = 0;
  if (dt == DType::Float16) c.precisions = {Precision::FP32, Precision::FP16};
  if (dt == DType::BFloat16) c.precisions = {Precision::FP32, Precision::BF16};
  return c;
}

inline std::string describe(const std::vector<PlanLayerInfo>& layers) {
  std::string s;
  for (const auto& l : layers) {
    s += "\n  " + l.name + " (" + layer_kind_name(l.kind) + ", " + l.tactic + "):";
    for (size_t i = 0; i < l.inputs.size(); ++i)
      s += " " + l.inputs[i] + "[" + tensor_format_name(l.input_formats[i]) + "]";
    s += " ->";
    for (size_t i = 0; i < l.outputs.size(); ++i)
      s += " " + l.outputs[i] + "[" + tensor_format_name(l.output_formats[i]) + "]";
  }
  return s;
}

}  // namespace kiln::engine::cuda_conv_test

#endif
