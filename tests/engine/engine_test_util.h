#pragma once
// Helpers for engine tests: random tensors, building and running a network on the CPU, comparisons.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kiln/engine/builder.h"
#include "kiln/engine/execution_context.h"
#include "kiln/support/logging.h"
#include "kiln/engine/network.h"
#include "kiln/support/error.h"

namespace kiln::engine::testing {

/// Uniform random values in [lo, hi) (integers rounded) of any dtype.
inline HostTensor random_tensor(DType dtype, Dims dims, std::mt19937& rng, double lo = -1.0,
                                double hi = 1.0) {
  HostTensor t(dtype, dims);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = dist(rng);
    if (!is_floating(dtype)) v = std::floor(v);
    t.set_from_double(i, v);
  }
  return t;
}

/// Uniform random multiples of 1/denom in [lo, hi) (any dtype). With |value * denom| <= 256 every value, and
/// every short sum of them, is exact in fp16 and bf16: for layers whose reduced-precision result must match
/// the fp32 reference exactly (orders, ties, indices) or whose rounding errors would otherwise add up (long
/// scans).
inline HostTensor random_grid_tensor(DType dtype, Dims dims, std::mt19937& rng, double lo, double hi,
                                     double denom) {
  HostTensor t(dtype, dims);
  std::uniform_real_distribution<double> dist(lo * denom, hi * denom);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, std::floor(dist(rng)) / denom);
  return t;
}

/// Values as doubles.
inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get_as_double(i);
  return v;
}

/// Naive 3x3 stride-1 pad-1 convolution over one NCHW image (c x h x w) with bias, in double precision.
inline std::vector<double> conv3x3(const std::vector<double>& x, int64_t c, int64_t h, int64_t w,
                                   const HostTensor& k, const HostTensor& b) {
  int64_t o = k.sizes()[0];
  std::vector<double> y(static_cast<size_t>(o * h * w));
  for (int64_t oc = 0; oc < o; ++oc)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        double s = b.get_as_double(oc);
        for (int64_t ic = 0; ic < c; ++ic)
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t d = 0; d < 3; ++d) {
              int64_t yy = i + a - 1, xx = j + d - 1;
              if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
              s += x[(ic * h + yy) * w + xx] * k.get_as_double(((oc * c + ic) * 3 + a) * 3 + d);
            }
        y[(oc * h + i) * w + j] = s;
      }
  return y;
}

/// How many of a plan's layers are of `kind`.
inline int count_kind(const std::vector<PlanLayerInfo>& layers, LayerKind kind) {
  int n = 0;
  for (const PlanLayerInfo& l : layers) n += l.kind == kind;
  return n;
}

/// The tactic of the plan's first layer of `kind`; empty when it has none.
inline std::string tactic_of(const Plan& plan, LayerKind kind) {
  for (const PlanLayerInfo& l : plan.layers()) {
    if (l.kind == kind) return l.tactic;
  }
  return "";
}

/// The quantization tests' MLP: input "x" of `x_dims` -> act(x W1 + b1) -> h W2^T, output "y"; W1 [K, H], b1
/// [H] and W2 [N, H] constants (linear layers: bias and activation fuse into the first matrix multiply).
inline void add_two_layer_mlp(Network& net, const Dims& x_dims, const HostTensor& w1, const HostTensor& b1,
                              const HostTensor& w2, ActivationKind act) {
  Tensor* x = net.add_input("x", DType::Float32, x_dims);
  Tensor* h = net.add_matrix_multiply("mm1", x, false, net.add_constant("w1", Weights("w1", w1)), false);
  h = net.add_activation(
      "act", net.add_elementwise("bias", h, net.add_constant("b1", Weights("b1", b1)), ElementwiseOp::Add),
      act);
  Tensor* y = net.add_matrix_multiply("mm2", h, false, net.add_constant("w2", Weights("w2", w2)), true);
  y->set_name("y");
  net.mark_output(y);
}

inline std::shared_ptr<Plan> build(const Network& net, BuilderConfig config = {}) {
  config.threads = config.threads ? config.threads : 2;
  return Builder(config).build(net);
}

/// A build of `net` with the log at Info captured (each timed layer's contest: "layer 'NAME' (...): tactic
/// ... timed: ..."), the log level restored after.
struct LoggedBuild {
  std::shared_ptr<Plan> plan;
  std::string log;
};
inline LoggedBuild build_logged(const Network& net, const BuilderConfig& config = {}) {
  const LogLevel level = log_level();
  set_log_level(LogLevel::Info);
  ::testing::internal::CaptureStderr();
  LoggedBuild out;
  try {
    out.plan = build(net, config);
  } catch (...) {
    ::testing::internal::GetCapturedStderr();
    set_log_level(level);
    throw;
  }
  out.log = ::testing::internal::GetCapturedStderr();
  set_log_level(level);
  return out;
}

/// The contest line of layer `name` in a build log (its candidates' figures after "timed:"); empty when the
/// layer was not timed.
inline std::string contest_line(const std::string& log, const std::string& name) {
  const std::string key = "layer '" + name + "'";
  for (size_t at = log.find(key); at != std::string::npos; at = log.find(key, at + 1)) {
    const std::string line = log.substr(at, log.find('\n', at) - at);
    if (line.find("timed:") != std::string::npos) return line;
  }
  return "";
}

/// The backend the layer tests (check_layer) run on: $KILN_TEST_BACKEND, default "cpu". The ctest
/// kiln_engine_gpu_tests runs the EngineLayers tests with KILN_TEST_BACKEND=cuda.
inline std::string test_backend() {
  const char* b = std::getenv("KILN_TEST_BACKEND");
  return b && *b ? b : "cpu";
}

/// A process-wide instance of backend `name` (for moving test data to and from device memory), or null with
/// `why` set when it cannot be created (no GPU, a build without CUDA).
inline const Backend* shared_backend(const std::string& name, std::string* why = nullptr) {
  static std::map<std::string, std::pair<std::unique_ptr<Backend>, std::string>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    std::pair<std::unique_ptr<Backend>, std::string> entry;
    try {
      entry.first = create_backend(name, BackendOptions{2});
    } catch (const Error& e) {
      entry.second = e.message();
    }
    it = cache.emplace(name, std::move(entry)).first;
  }
  if (why) *why = it->second.second;
  return it->second.first.get();
}

/// Skips the current test, with the reason, when the cuda backend cannot be created here (no GPU).
#define KILN_REQUIRE_GPU() \
  std::string why_no_gpu;  \
  if (!::kiln::engine::testing::shared_backend("cuda", &why_no_gpu)) GTEST_SKIP() << why_no_gpu

/// Device buffers of a test run on a backend whose memory is not host memory.
struct DeviceBuffers {
  const Backend* backend = nullptr;
  std::vector<void*> buffers;
  void* add(size_t bytes) {
    buffers.push_back(backend->allocate(std::max<size_t>(bytes, 1)));
    return buffers.back();
  }
  ~DeviceBuffers() {
    for (void* p : buffers) backend->deallocate(p);
  }
};

/// Runs a plan with named inputs; returns the outputs in binding order. On a device backend the inputs are
/// copied to device buffers and the outputs back (after waiting for the stream).
inline std::vector<HostTensor> run(const std::shared_ptr<const Plan>& plan,
                                   const std::map<std::string, HostTensor>& inputs, int profile = 0) {
  ExecutionContext ctx(plan, profile);
  const Backend* device = plan->backend_name() == "cpu" ? nullptr : shared_backend(plan->backend_name());
  if (device && device->host_accessible()) device = nullptr;
  DeviceBuffers dev{device, {}};
  for (const auto& [name, t] : inputs) {
    ctx.set_input_shape(name, t.sizes());
    void* p = const_cast<uint8_t*>(t.data());
    if (device) {
      p = dev.add(t.nbytes());
      device->copy(p, t.data(), t.nbytes(), CopyKind::HostToDevice, nullptr);
    }
    ctx.set_tensor_address(name, p);
  }
  std::vector<HostTensor> outs;
  std::vector<std::string> names;
  for (const auto& b : plan->bindings()) {
    if (b.is_input) continue;
    Dims d = ctx.tensor_shape(b.name);
    if (b.data_dependent) {
      int64_t n = 1;
      for (const auto& [name, t] : inputs) n = std::max(n, t.numel());
      d = {n, d[1]};
    }
    outs.emplace_back(b.dtype, d);
    names.push_back(b.name);
  }
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < outs.size(); ++i) {
    out_ptrs.push_back(device ? dev.add(outs[i].nbytes()) : outs[i].mutable_data());
    ctx.set_tensor_address(names[i], out_ptrs.back());
  }
  ctx.execute();
  if (device) {
    for (size_t i = 0; i < outs.size(); ++i) {
      device->copy(outs[i].mutable_data(), out_ptrs[i], outs[i].nbytes(), CopyKind::DeviceToHost, nullptr);
    }
    device->synchronize(nullptr);
  }
  return outs;
}

/// Expects |got - want| <= atol + rtol * |want| elementwise (NaN matches NaN).
inline void expect_close(const HostTensor& got, const std::vector<double>& want, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
  int bad = 0;
  std::string first;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get_as_double(static_cast<int64_t>(i));
    if (std::isnan(want[i]) && std::isnan(g)) continue;
    if (std::isinf(want[i]) && g == want[i]) continue;
    if (!(std::fabs(g - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      if (++bad <= 5)
        first += " [" + std::to_string(i) + "] got " + std::to_string(g) + " want " + std::to_string(want[i]);
    }
  }
  if (bad) ADD_FAILURE() << what << ": " << bad << " of " << want.size() << " elements differ:" << first;
}

}  // namespace kiln::engine::testing

namespace kiln::engine::testing {

using BuildFn = std::function<Tensor*(Network&, const std::vector<Tensor*>&)>;
using RefFn = std::function<std::vector<double>(const std::vector<HostTensor>&)>;

/// Precisions a layer test runs at; reduced ones are compared to the fp32 reference with
/// rtol = atol = 1e-2 (fp16 has 11 significant bits, bf16 8: a few roundings stay within 1e-2 for
/// values of order 1).
enum class TestPrecision { FP32, FP16, BF16 };

/// Builds `build_fn` over inputs with the dtypes/dims of `inputs` (input i named "in<i>"; inputs listed in
/// `dynamic` get all dims -1 with a profile min = dims/2..max = dims*2 around them), runs it, and compares
/// output 0 with `ref_fn(inputs)`. fp32: rtol 1e-4, atol 1e-5 (float accumulation order differs from
/// the double reference).
inline void check_layer(const std::string& what, const std::vector<HostTensor>& inputs,
                        const BuildFn& build_fn, const RefFn& ref_fn,
                        std::vector<TestPrecision> precisions = {TestPrecision::FP32},
                        std::vector<int> dynamic = {}) {
  std::vector<double> want = ref_fn(inputs);
  std::string backend = test_backend(), unavailable;
  if (backend != "cpu" && !shared_backend(backend, &unavailable)) {
    GTEST_SKIP() << "backend '" << backend << "' is not available here: " << unavailable;
  }
  for (TestPrecision p : precisions) {
    SCOPED_TRACE(what + (p == TestPrecision::FP32 ? " fp32" : p == TestPrecision::FP16 ? " fp16" : " bf16"));
    Network net;
    std::vector<Tensor*> ins;
    BuilderConfig config;
    OptimizationProfile profile;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Dims d = inputs[i].sizes();
      std::string name = "in" + std::to_string(i);
      bool dyn = std::find(dynamic.begin(), dynamic.end(), static_cast<int>(i)) != dynamic.end();
      if (dyn) {
        Dims mn = d, mx = d;
        for (auto& x : mn) x = std::max<int64_t>(1, x / 2);
        for (auto& x : mx) x = x * 2;
        profile.set_dimensions(name, mn, d, mx);
        d.assign(d.size(), -1);
      }
      ins.push_back(net.add_input(name, inputs[i].dtype(), d));
    }
    if (!dynamic.empty()) config.profiles.push_back(profile);
    Tensor* out = build_fn(net, ins);
    out->set_name("out");
    net.mark_output(out);
    if (p == TestPrecision::FP16) config.precisions = {Precision::FP32, Precision::FP16};
    if (p == TestPrecision::BF16) config.precisions = {Precision::FP32, Precision::BF16};
    config.backend = backend;
    std::shared_ptr<Plan> plan;
    try {
      plan = build(net, config);
    } catch (const Error& e) {
      // A device backend that does not implement a layer kind yet skips it (saying which); cpu must build.
      if (backend == "cpu" || e.kind() != ErrorKind::Unsupported) throw;
      GTEST_SKIP() << what << ": not supported on backend '" << backend << "' yet: " << e.message();
    }
    std::map<std::string, HostTensor> feed;
    for (size_t i = 0; i < inputs.size(); ++i) feed["in" + std::to_string(i)] = inputs[i];
    auto outs = run(plan, feed);
    double rtol = p == TestPrecision::FP32 ? 1e-4 : 1e-2, atol = p == TestPrecision::FP32 ? 1e-5 : 1e-2;
    expect_close(outs[0], want, rtol, atol, what);
  }
}

inline const std::vector<TestPrecision> kAllPrecisions = {TestPrecision::FP32, TestPrecision::FP16,
                                                          TestPrecision::BF16};

/// Row-major strides.
inline std::vector<int64_t> strides(const Dims& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (int64_t i = static_cast<int64_t>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

/// Multi-index of flat index i.
inline std::vector<int64_t> unravel(int64_t i, const Dims& d) {
  std::vector<int64_t> idx(d.size());
  for (int64_t k = static_cast<int64_t>(d.size()) - 1; k >= 0; --k) {
    idx[k] = d[k] ? i % d[k] : 0;
    i = d[k] ? i / d[k] : 0;
  }
  return idx;
}

/// Flat index of a multi-index into dims `d`, broadcasting (dims of size 1 read index 0; leading dims
/// dropped).
inline int64_t ravel_broadcast(const std::vector<int64_t>& idx, const Dims& d) {
  int64_t off = 0, s = 1;
  for (int64_t k = static_cast<int64_t>(d.size()) - 1; k >= 0; --k) {
    int64_t i = idx[idx.size() - d.size() + k];
    off += (d[k] == 1 ? 0 : i) * s;
    s *= d[k];
  }
  return off;
}

}  // namespace kiln::engine::testing
