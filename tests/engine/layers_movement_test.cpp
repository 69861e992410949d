// Layer kinds against naive references: shuffle (static and dynamic reshape through shape tensors),
// concat, slice (static and dynamic), gather, scatter, padding, fill (arange over a dynamic length),
// shape, nonzero (output allocator), constant. Data movement is exact: tolerance 0 unless stated.

#include <gtest/gtest-spi.h>

#include <cstring>

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

TEST(EngineHarness, DetectsMismatch) {
  HostTensor t = HostTensor::from_floats({1.0f, 2.0f}, {2});
  EXPECT_NONFATAL_FAILURE(expect_close(t, {1.0, 2.5}, 1e-4, 1e-5, "deliberate"), "deliberate");
}

std::vector<double> ref_permute(const HostTensor& x, const std::vector<int64_t>& perm) {
  Dims d = x.sizes(), od;
  for (int64_t p : perm) od.push_back(d[p]);
  auto st = strides(d);
  std::vector<double> y;
  int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    auto idx = unravel(i, od);
    int64_t off = 0;
    for (size_t k = 0; k < perm.size(); ++k) off += idx[k] * st[perm[k]];
    y.push_back(x.get_as_double(off));
  }
  return y;
}

TEST(EngineLayers, ShuffleTransposeReshape) {
  std::mt19937 rng(41);
  HostTensor x = random_tensor(DType::Float32, {2, 3, 4}, rng);
  check_layer("transpose", {x},
              [](Network& n, const std::vector<Tensor*>& in) { return n.add_shuffle("", in[0], ShuffleParams{{2, 0, 1}, false, {}, {}}); },
              [](const std::vector<HostTensor>& in) { return ref_permute(in[0], {2, 0, 1}); }, kAllPrecisions);
  check_layer("reshape 0/-1 then transpose", {x},
              [](Network& n, const std::vector<Tensor*>& in) { return n.add_shuffle("", in[0], ShuffleParams{{}, true, {0, -1}, {1, 0}}); },
              [](const std::vector<HostTensor>& in) { return ref_permute(in[0].reshaped({2, 12}), {1, 0}); });
  // Dynamic reshape: x [B, S, E] -> [B*S, E] with the shape computed from shape(x) at run time.
  check_layer("dynamic reshape via shape tensors", {x},
              [](Network& n, const std::vector<Tensor*>& in) {
                Tensor* shp = n.add_shape("shape", in[0]);
                Tensor* b = n.add_slice("b", shp, SliceParams{{0}, {1}, {1}});
                Tensor* s = n.add_slice("s", shp, SliceParams{{1}, {1}, {1}});
                Tensor* bs = n.add_elementwise("bs", b, s, ElementwiseOp::Mul);
                Tensor* last = n.add_slice("last", shp, SliceParams{{2}, {1}, {1}});
                Tensor* target = n.add_concat("target", {bs, last}, 0);
                return n.add_shuffle("reshape", in[0], ShuffleParams{}, target);
              },
              [](const std::vector<HostTensor>& in) { return values(in[0]); }, {TestPrecision::FP32}, {0});
}

TEST(EngineLayers, ConcatAndSlice) {
  std::mt19937 rng(42);
  HostTensor a = random_tensor(DType::Float32, {2, 3, 4}, rng), b = random_tensor(DType::Float32, {2, 5, 4}, rng);
  check_layer("concat axis 1", {a, b},
              [](Network& n, const std::vector<Tensor*>& in) { return n.add_concat("", {in[0], in[1]}, 1); },
              [](const std::vector<HostTensor>& in) {
                std::vector<double> y;
                for (int i = 0; i < 2; ++i) {
                  for (int j = 0; j < 12; ++j) y.push_back(in[0].get_as_double(i * 12 + j));
                  for (int j = 0; j < 20; ++j) y.push_back(in[1].get_as_double(i * 20 + j));
                }
                return y;
              },
              kAllPrecisions);
  HostTensor x = random_tensor(DType::Float32, {6, 8}, rng);
  check_layer("slice strided + negative stride", {x},
              [](Network& n, const std::vector<Tensor*>& in) { return n.add_slice("", in[0], SliceParams{{1, 7}, {3, 4}, {2, -2}}); },
              [](const std::vector<HostTensor>& in) {
                std::vector<double> y;
                for (int i = 0; i < 3; ++i)
                  for (int j = 0; j < 4; ++j) y.push_back(in[0].get_as_double((1 + 2 * i) * 8 + 7 - 2 * j));
                return y;
              });
  // x[:, 1:] with a dynamic second dim: size = shape(x) - [0, 1].
  check_layer("dynamic slice", {x},
              [](Network& n, const std::vector<Tensor*>& in) {
                Tensor* shp = n.add_shape("", in[0]);
                Tensor* size = n.add_elementwise("", shp, n.add_constant("", HostTensor::from_int64s({0, 1}, {2})), ElementwiseOp::Sub);
                Tensor* start = n.add_constant("", HostTensor::from_int64s({0, 1}, {2}));
                return n.add_slice("", in[0], SliceParams{{0, 0}, {0, 0}, {}}, start, size);
              },
              [](const std::vector<HostTensor>& in) {
                std::vector<double> y;
                for (int i = 0; i < 6; ++i)
                  for (int j = 1; j < 8; ++j) y.push_back(in[0].get_as_double(i * 8 + j));
                return y;
              },
              {TestPrecision::FP32}, {0});
}

TEST(EngineLayers, GatherAndScatter) {
  std::mt19937 rng(43);
  HostTensor x = random_tensor(DType::Float32, {4, 5}, rng);
  HostTensor idx = HostTensor::from_int64s({3, -1, 0, 2, 2, 1}, {2, 3});
  check_layer("gather axis 1", {x, idx},
              [](Network& n, const std::vector<Tensor*>& in) { return n.add_gather("", in[0], in[1], GatherParams{GatherParams::Default, 1}); },
              [](const std::vector<HostTensor>& in) {
                std::vector<double> y;
                for (int r = 0; r < 4; ++r)
                  for (int k = 0; k < 6; ++k) {
                    int64_t j = static_cast<int64_t>(in[1].get_as_double(k));
                    y.push_back(in[0].get_as_double(r * 5 + (j < 0 ? j + 5 : j)));
                  }
                return y;
              },
              kAllPrecisions);
  HostTensor eidx = HostTensor::from_int64s({0, 4, 1, 1, 3, 2, 0, 0}, {4, 2});
  check_layer("gather elements", {x, eidx},
              [](Network& n, const std::vector<Tensor*>& in) { return n.add_gather("", in[0], in[1], GatherParams{GatherParams::Elements, 1}); },
              [](const std::vector<HostTensor>& in) {
                std::vector<double> y;
                for (int r = 0; r < 4; ++r)
                  for (int k = 0; k < 2; ++k) y.push_back(in[0].get_as_double(r * 5 + static_cast<int64_t>(in[1].get_as_double(r * 2 + k))));
                return y;
              });
  HostTensor upd = random_tensor(DType::Float32, {4, 2}, rng);
  for (auto red : {ScatterParams::None, ScatterParams::Add}) {
    HostTensor sidx = HostTensor::from_int64s({0, 4, 1, 2, 3, 0, 2, 1}, {4, 2});
    check_layer("scatter", {x, sidx, upd},
                [&](Network& n, const std::vector<Tensor*>& in) { return n.add_scatter("", in[0], in[1], in[2], ScatterParams{red, 1}); },
                [&](const std::vector<HostTensor>& in) {
                  auto y = values(in[0]);
                  for (int r = 0; r < 4; ++r)
                    for (int k = 0; k < 2; ++k) {
                      int64_t j = static_cast<int64_t>(in[1].get_as_double(r * 2 + k));
                      double u = in[2].get_as_double(r * 2 + k);
                      y[r * 5 + j] = red == ScatterParams::Add ? y[r * 5 + j] + u : u;
                    }
                  return y;
                });
  }
  // An out-of-range index is a clear error at run time.
  Network net;
  Tensor* d = net.add_input("d", DType::Float32, {4});
  Tensor* i = net.add_input("i", DType::Int64, {1});
  net.mark_output(net.add_gather("g", d, i, GatherParams{}));
  auto plan = build(net);
  EXPECT_THROW(run(plan, {{"d", random_tensor(DType::Float32, {4}, rng)}, {"i", HostTensor::from_int64s({9}, {1})}}), kiln::Error);
}

TEST(EngineLayers, Padding) {
  std::mt19937 rng(44);
  HostTensor x = random_tensor(DType::Float32, {2, 4, 5}, rng);
  for (auto mode : {PaddingParams::Constant, PaddingParams::Reflect, PaddingParams::Replicate, PaddingParams::Circular}) {
    PaddingParams p{mode, {0, 1, 2}, {0, 3, 1}, 0.5};
    check_layer("padding", {x}, [&](Network& n, const std::vector<Tensor*>& in) { return n.add_padding("", in[0], p); },
                [&](const std::vector<HostTensor>& in) {
                  std::vector<double> y;
                  for (int a = 0; a < 2; ++a)
                    for (int b = -1; b < 7; ++b)
                      for (int c = -2; c < 6; ++c) {
                        auto fix = [&](int v, int len, bool& out) {
                          if (v >= 0 && v < len) return v;
                          out = true;
                          switch (mode) {
                            case PaddingParams::Reflect: return v < 0 ? -v : 2 * (len - 1) - v;
                            case PaddingParams::Replicate: return v < 0 ? 0 : len - 1;
                            case PaddingParams::Circular: return ((v % len) + len) % len;
                            default: return 0;
                          }
                        };
                        bool out = false;
                        int bb = fix(b, 4, out), cc = fix(c, 5, out);
                        y.push_back(mode == PaddingParams::Constant && out ? 0.5 : in[0].get_as_double((a * 4 + bb) * 5 + cc));
                      }
                  return y;
                },
                kAllPrecisions);
  }
}

TEST(EngineLayers, FillShapeConstant) {
  std::mt19937 rng(45);
  HostTensor x = random_tensor(DType::Float32, {3, 7}, rng);
  // arange(seq_len) + x[0]: seq_len from shape(x)[1] with x dynamic.
  check_layer("arange(seq_len)", {x},
              [](Network& n, const std::vector<Tensor*>& in) {
                Tensor* shp = n.add_shape("", in[0]);
                Tensor* len = n.add_slice("", shp, SliceParams{{1}, {1}, {1}});
                FillParams f;
                f.op = FillParams::Arange;
                f.value = 0.5;
                f.delta = 2.0;
                Tensor* ar = n.add_fill("arange", f, len);
                return n.add_elementwise("", in[0], ar, ElementwiseOp::Add);
              },
              [](const std::vector<HostTensor>& in) {
                auto y = values(in[0]);
                for (size_t i = 0; i < y.size(); ++i) y[i] += 0.5 + 2.0 * static_cast<double>(i % 7);
                return y;
              },
              kAllPrecisions, {0});
  check_layer("linspace + constant fill + constant", {x},
              [](Network& n, const std::vector<Tensor*>& in) {
                FillParams lin{FillParams::Linspace, DType::Float32, {7}, -1.0, 2.0};
                FillParams con{FillParams::Constant, DType::Float32, {3, 1}, 0.25, 0};
                Tensor* c = n.add_constant("c", HostTensor::from_floats({1, 2, 3}, {3, 1}));
                Tensor* s = n.add_elementwise("", n.add_fill("", lin), n.add_fill("", con), ElementwiseOp::Add);
                return n.add_elementwise("", n.add_elementwise("", in[0], s, ElementwiseOp::Add), c, ElementwiseOp::Mul);
              },
              [](const std::vector<HostTensor>& in) {
                auto y = values(in[0]);
                for (size_t i = 0; i < y.size(); ++i) y[i] = (y[i] + (-1.0 + 3.0 * (i % 7) / 6.0) + 0.25) * (1 + i / 7);
                return y;
              },
              kAllPrecisions);
  check_layer("shape output", {x}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_shape("", in[0]); },
              [](const std::vector<HostTensor>& in) { return std::vector<double>{3, 7}; });
}

class CollectingAllocator : public OutputAllocator {
 public:
  void* reallocate_output(const std::string&, size_t bytes) override {
    buffer.resize(bytes);
    return buffer.data();
  }
  void notify_shape(const std::string&, const Dims& d) override { dims = d; }
  std::vector<uint8_t> buffer;
  Dims dims;
};

TEST(EngineLayers, NonZeroWithOutputAllocator) {
  std::mt19937 rng(46);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {-1, 4});
  Tensor* positive = net.add_elementwise("gt", x, net.add_constant("zero", HostTensor::from_floats({0.0f}, {1})), ElementwiseOp::Greater);
  Tensor* nz = net.add_nonzero("nz", positive);
  nz->set_name("idx");
  net.mark_output(nz);
  BuilderConfig config;
  OptimizationProfile p;
  p.set_dimensions("x", {1, 4}, {3, 4}, {8, 4});
  config.profiles = {p};
  auto plan = build(net, config);
  EXPECT_TRUE(plan->binding("idx").data_dependent);
  for (int64_t rows : {1, 3, 8}) {
    HostTensor in = random_tensor(DType::Float32, {rows, 4}, rng);
    ExecutionContext ctx(plan);
    ctx.set_input_shape("x", in.sizes());
    ctx.set_tensor_address("x", const_cast<uint8_t*>(in.data()));
    EXPECT_EQ(ctx.tensor_shape("idx"), (Dims{-1, 2}));
    CollectingAllocator alloc;
    ctx.set_output_allocator("idx", &alloc);
    ctx.execute();
    std::vector<double> want;
    for (int64_t i = 0; i < in.numel(); ++i) {
      if (in.get_as_double(i) > 0) { want.push_back(i / 4); want.push_back(i % 4); }
    }
    ASSERT_EQ(alloc.dims, (Dims{static_cast<int64_t>(want.size() / 2), 2}));
    HostTensor got(DType::Int64, alloc.dims);
    std::memcpy(got.mutable_data(), alloc.buffer.data(), got.nbytes());
    expect_close(got, want, 0, 0, "nonzero");
  }
}

TEST(EngineLayers, ValidationNamesLayerAndTensor) {
  Network net;
  Tensor* a = net.add_input("a", DType::Float32, {2, 3});
  Tensor* b = net.add_input("b", DType::Float32, {4, 3});
  try {
    net.add_elementwise("my_add", a, b, ElementwiseOp::Add);
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("my_add"), std::string::npos) << e.what();
  }
  EXPECT_THROW(net.add_matrix_multiply("mm", a, false, b, false), kiln::Error);
  EXPECT_THROW(net.add_softmax("sm", a, 5), kiln::Error);
  EXPECT_THROW(net.add_reduce("r", a, ReduceOp::Sum, {7}, false), kiln::Error);
  EXPECT_THROW(net.add_convolution("c", a, HostTensor(DType::Float32, {1, 3, 3, 3}), Weights(), {}), kiln::Error);
  EXPECT_THROW(net.add_shuffle("s", a, ShuffleParams{{}, true, {5}, {}}), kiln::Error);
  EXPECT_THROW(net.add_slice("sl", a, SliceParams{{0, 2}, {2, 3}, {1, 1}}), kiln::Error);
  EXPECT_THROW(net.add_unary("n", a, UnaryOp::Not), kiln::Error);
  EXPECT_THROW(net.add_cast("x", nullptr, DType::Float32), kiln::Error);
}

}  // namespace
}  // namespace kiln::engine
