// Scatter (with and without Add) and NonZero against naive references on the test backend
// ($KILN_TEST_BACKEND): several shapes and axes, index tensors smaller than the data and with more entries
// than the axis (duplicate targets), negative indices, Int64/Int32 indices, float data at fp32/fp16/bf16 and
// integer/Bool data. Scatter data and updates are multiples of 1/16 in [-1, 1): every sum the tests make is
// exact in fp16 and bf16, so the tolerance is check_layer's (fp32 1e-4; fp16/bf16 1e-2) and duplicates must
// resolve exactly as the reference (last index element in row-major order wins; additions in that order).
// NonZero is exact; so is the gather after it (the exp of the gathered values: fp32 1e-4).

#include <cmath>
#include <cstring>

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// torch.scatter / scatter_add: y = x; for each index element e in row-major order, the element at e's
/// multi-index with the axis coordinate idx[e] (negative wraps) becomes (or adds) upd[e].
std::vector<double> ref_scatter(const HostTensor& x, const HostTensor& idx, const HostTensor& upd,
                                int64_t axis, bool add) {
  auto y = values(x);
  auto xs = strides(x.sizes());
  for (int64_t e = 0; e < idx.numel(); ++e) {
    auto c = unravel(e, idx.sizes());
    int64_t t = static_cast<int64_t>(idx.get_as_double(e));
    c[axis] = t < 0 ? t + x.sizes()[axis] : t;
    int64_t off = 0;
    for (size_t d = 0; d < c.size(); ++d) off += c[d] * xs[d];
    double u = upd.get_as_double(e);
    y[off] = add ? y[off] + u : u;
  }
  return y;
}

struct ScatterCase {
  Dims data, index;
  int64_t axis;
  DType index_dtype;
};

TEST(EngineLayers, ScatterShapesAxesAndDuplicates) {
  std::mt19937 rng(301);
  const std::vector<ScatterCase> cases = {
      {{6, 7}, {4, 5}, 0, DType::Int64},         // index smaller than the data in both dims
      {{6, 7}, {4, 5}, 1, DType::Int32},         // Int32 indices
      {{3, 4, 5}, {3, 2, 9}, 2, DType::Int64},   // more index entries than the axis: many duplicates
      {{5, 4, 3}, {12, 4, 2}, 0, DType::Int32},  // duplicates along the outermost axis
      {{2, 3, 4, 5}, {2, 3, 4, 5}, 1, DType::Int64},
      {{64, 3000}, {64, 4000}, 1, DType::Int64},  // many elements: grid-stride loops, ~1.3 hits per target
  };
  for (const auto& c : cases) {
    int64_t len = c.data[c.axis];
    HostTensor idx =
        random_tensor(c.index_dtype, c.index, rng, static_cast<double>(-len), static_cast<double>(len));
    HostTensor x = random_grid_tensor(DType::Float32, c.data, rng, -1, 1, 16);
    HostTensor upd = random_grid_tensor(DType::Float32, c.index, rng, -1, 1, 16);
    for (auto red : {ScatterParams::None, ScatterParams::Add}) {
      std::string what = "scatter axis " + std::to_string(c.axis) + " of " + std::to_string(c.data.size()) +
                         "-d" + (red == ScatterParams::Add ? " add" : "");
      auto build_fn = [&](Network& n, const std::vector<Tensor*>& in) {
        return n.add_scatter("", in[0], in[1], in[2], ScatterParams{red, c.axis});
      };
      auto ref_fn = [&](const std::vector<HostTensor>& in) {
        return ref_scatter(in[0], in[1], in[2], c.axis, red == ScatterParams::Add);
      };
      check_layer(what, {x, idx, upd}, build_fn, ref_fn, kAllPrecisions);
    }
  }
}

TEST(EngineLayers, ScatterIntegerAndBoolData) {
  std::mt19937 rng(302);
  HostTensor idx = random_tensor(DType::Int64, {5, 9}, rng, -6, 6);
  for (DType dt : {DType::Int32, DType::Int64, DType::Int8}) {
    HostTensor x = random_tensor(dt, {5, 6}, rng, -20, 20);
    HostTensor upd = random_tensor(dt, {5, 9}, rng, -20, 20);
    for (auto red : {ScatterParams::None, ScatterParams::Add}) {
      check_layer(
          std::string("scatter ") + dtype_name(dt) + (red == ScatterParams::Add ? " add" : ""), {x, idx, upd},
          [&](Network& n, const std::vector<Tensor*>& in) {
            return n.add_scatter("", in[0], in[1], in[2], ScatterParams{red, 1});
          },
          [&](const std::vector<HostTensor>& in) {
            return ref_scatter(in[0], in[1], in[2], 1, red == ScatterParams::Add);
          });
    }
  }
  HostTensor bx = random_tensor(DType::Bool, {4, 7}, rng, 0, 2),
             bu = random_tensor(DType::Bool, {4, 5}, rng, 0, 2);
  HostTensor bidx = random_tensor(DType::Int32, {4, 5}, rng, 0, 4);
  check_layer(
      "scatter bool", {bx, bidx, bu},
      [](Network& n, const std::vector<Tensor*>& in) {
        return n.add_scatter("", in[0], in[1], in[2], ScatterParams{ScatterParams::None, 0});
      },
      [](const std::vector<HostTensor>& in) { return ref_scatter(in[0], in[1], in[2], 0, false); });
}

/// Collects a data-dependent output in host memory (cpu) or device memory (a device backend).
class DeviceOutputAllocator : public OutputAllocator {
 public:
  explicit DeviceOutputAllocator(const Backend* device) : device_(device) {}
  ~DeviceOutputAllocator() override {
    if (device_ && data_) device_->deallocate(data_);
  }
  void* reallocate_output(const std::string&, size_t bytes) override {
    if (!device_) {
      host_.resize(std::max<size_t>(bytes, 1));
      return host_.data();
    }
    if (data_) device_->deallocate(data_);
    data_ = device_->allocate(std::max<size_t>(bytes, 1));
    return data_;
  }
  void notify_shape(const std::string&, const Dims& d) override { dims = d; }
  /// The output as a host tensor (after the stream's work is done).
  HostTensor result(DType dtype = DType::Int64) const {
    HostTensor t(dtype, dims);
    if (t.nbytes() == 0) return t;
    if (device_) {
      device_->copy(t.mutable_data(), data_, t.nbytes(), CopyKind::DeviceToHost, nullptr);
      device_->synchronize(nullptr);
    } else {
      std::memcpy(t.mutable_data(), host_.data(), t.nbytes());
    }
    return t;
  }
  Dims dims;

 private:
  const Backend* device_;
  void* data_ = nullptr;
  std::vector<uint8_t> host_;
};

/// The backend `name` as a device whose memory the host cannot address (nullptr on cpu and host-accessible
/// backends); returns why it cannot be created here, or "" when it can.
std::string device_of(const std::string& name, const Backend** device) {
  *device = nullptr;
  if (name == "cpu") return "";
  std::string unavailable;
  *device = shared_backend(name, &unavailable);
  if (*device == nullptr) return "backend '" + name + "' is not available here: " + unavailable;
  if ((*device)->host_accessible()) *device = nullptr;
  return "";
}

/// Builds nonzero(x) on the test backend at `precision` (a float x is cast to fp16/bf16 inside), runs it on
/// `x` with an output allocator and compares with the row-major indices of x's non-zero elements.
void check_nonzero(const std::string& what, const HostTensor& x,
                   TestPrecision precision = TestPrecision::FP32) {
  SCOPED_TRACE(what);
  const std::string backend = test_backend();
  const Backend* device = nullptr;
  if (const std::string why = device_of(backend, &device); !why.empty()) GTEST_SKIP() << why;
  Network net;
  Tensor* in = net.add_input("x", x.dtype(), x.sizes());
  Tensor* nz = net.add_nonzero("nz", in);
  nz->set_name("idx");
  net.mark_output(nz);
  BuilderConfig config;
  config.backend = backend;
  if (precision == TestPrecision::FP16) config.precisions = {Precision::FP32, Precision::FP16};
  if (precision == TestPrecision::BF16) config.precisions = {Precision::FP32, Precision::BF16};
  std::shared_ptr<Plan> plan;
  try {
    plan = build(net, config);
  } catch (const Error& e) {
    if (backend == "cpu" || e.kind() != ErrorKind::Unsupported) throw;
    GTEST_SKIP() << what << ": not supported on backend '" << backend << "' yet: " << e.message();
  }
  ASSERT_TRUE(plan->binding("idx").data_dependent);
  DeviceBuffers dev{device, {}};
  void* xp = const_cast<uint8_t*>(x.data());
  if (device) {
    xp = dev.add(x.nbytes());
    device->copy(xp, x.data(), x.nbytes(), CopyKind::HostToDevice, nullptr);
  }
  DeviceOutputAllocator alloc(device);
  ExecutionContext ctx(plan);
  ctx.set_input_shape("x", x.sizes());
  ctx.set_tensor_address("x", xp);
  ctx.set_output_allocator("idx", &alloc);
  // Twice on one context: the second run counts again (the arena and allocator buffer are reused).
  for (int round = 0; round < 2; ++round) {
    ctx.execute();
    if (device) device->synchronize(nullptr);
    std::vector<double> want;
    int64_t rank = static_cast<int64_t>(x.sizes().size());
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (x.get_as_double(i) == 0) continue;
      for (int64_t c : unravel(i, x.sizes())) want.push_back(static_cast<double>(c));
    }
    ASSERT_EQ(alloc.dims, (Dims{static_cast<int64_t>(rank ? want.size() / rank : 0), rank}));
    expect_close(alloc.result(), want, 0, 0, what);
  }
}

/// x with about `zero_fraction` of its elements set to exactly 0.
HostTensor with_zeros(HostTensor x, double zero_fraction, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (u(rng) < zero_fraction) x.set_from_double(i, 0);
  }
  return x;
}

TEST(EngineLayers, NonZeroShapesAndDtypes) {
  std::mt19937 rng(303);
  for (const Dims& d : std::vector<Dims>{{37}, {3, 5, 7}, {2, 1, 4, 3, 2}, {300, 1000}}) {
    HostTensor x = with_zeros(random_tensor(DType::Float32, d, rng), 0.4, rng);
    for (TestPrecision p : kAllPrecisions) {
      check_nonzero("nonzero float " + std::to_string(d.size()) + "-d " + std::to_string(static_cast<int>(p)),
                    x, p);
    }
  }
  // Sparse: a few non-zeros in a large tensor (most blocks and tiles find none).
  check_nonzero("nonzero sparse", with_zeros(random_tensor(DType::Float32, {5000, 70}, rng), 0.999, rng));
  check_nonzero("nonzero int32", random_tensor(DType::Int32, {6, 9}, rng, -2, 3));
  check_nonzero("nonzero int64", random_tensor(DType::Int64, {4, 3, 5}, rng, -2, 3));
  check_nonzero("nonzero uint8", random_tensor(DType::UInt8, {50}, rng, 0, 3));
  check_nonzero("nonzero bool", random_tensor(DType::Bool, {7, 8}, rng, 0, 2));
}

// masked_select's pattern: the values at nonzero's indices, then a pointwise op, as the network's output. Every
// tensor after the NonZero has a data-dependent length: the plan marks the output binding so (it needs an
// allocator), keeps it in the arena at its largest size, and hands it to the allocator once its length is known.
// Values are gathered and exp'd: tolerance check_layer's fp32 (the exp kernels are polynomial, within 1e-6).
TEST(EngineLayers, LayersAfterNonZeroGiveADataDependentOutput) {
  const std::string backend = test_backend();
  const Backend* device = nullptr;
  if (const std::string why = device_of(backend, &device); !why.empty()) GTEST_SKIP() << why;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {-1});
  Tensor* positive =
      net.add_elementwise("gt", x, net.add_constant("zero", HostTensor::from_floats({0.0f}, {1})), ElementwiseOp::Greater);
  Tensor* nz = net.add_nonzero("nz", positive);
  ShuffleParams flat;
  flat.has_reshape = true;
  flat.reshape = {-1};
  Tensor* index = net.add_shuffle("flat", nz, flat);
  Tensor* picked = net.add_gather("pick", x, index, GatherParams{GatherParams::Default, 0});
  Tensor* y = net.add_unary("exp", picked, UnaryOp::Exp);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.backend = backend;
  OptimizationProfile p;
  p.set_dimensions("x", {1}, {16}, {64});
  config.profiles = {p};
  auto plan = build(net, config);
  ASSERT_TRUE(plan->binding("y").data_dependent);
  std::mt19937 rng(61);
  for (int64_t n : {64, 7, 33}) {
    SCOPED_TRACE(n);
    HostTensor in = random_tensor(DType::Float32, {n}, rng);
    DeviceBuffers dev{device, {}};
    void* xp = const_cast<uint8_t*>(in.data());
    if (device) {
      xp = dev.add(in.nbytes());
      device->copy(xp, in.data(), in.nbytes(), CopyKind::HostToDevice, nullptr);
    }
    ExecutionContext ctx(plan);
    ctx.set_input_shape("x", in.sizes());
    ctx.set_tensor_address("x", xp);
    DeviceOutputAllocator alloc(device);
    ctx.set_output_allocator("y", &alloc);
    ctx.execute();
    if (device) device->synchronize(nullptr);
    std::vector<double> want;
    for (int64_t i = 0; i < n; ++i) {
      if (in.get_as_double(i) > 0) want.push_back(std::exp(in.get_as_double(i)));
    }
    ASSERT_EQ(alloc.dims, (Dims{static_cast<int64_t>(want.size())}));
    expect_close(alloc.result(DType::Float32), want, 1e-4, 1e-5, "exp(x[x > 0])");
  }
}

}  // namespace
}  // namespace kiln::engine
