// The vectorized pooling kernel against the reference: max / average with padding, ceil mode, dilation,
// count_include_pad and adaptive windows at ranks 3-5, in every memory format (the input converted to the
// format, the output converted back), and NaN propagation through max pooling.
//
// Tolerance: fp32 allclose(rtol=1e-5, atol=1e-6): max is exact; averages sum at most a few dozen O(1) values in
// float (the reference sums in double), ~1e-7 relative.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

OneLayer pooling(PoolingParams::Kind kind, std::vector<int64_t> window, std::vector<int64_t> stride,
                 std::vector<int64_t> padding, std::vector<int64_t> dilation = {}, bool ceil_mode = false,
                 bool count_include_pad = true) {
  OneLayer l;
  l.layer.name = "pool";
  l.layer.kind = LayerKind::Pooling;
  PoolingParams p;
  p.kind = kind;
  size_t ns = window.size();
  p.window = std::move(window);
  p.stride = std::move(stride);
  p.pre_padding = padding;
  p.post_padding = std::move(padding);
  p.dilation = dilation.empty() ? std::vector<int64_t>(ns, 1) : std::move(dilation);
  p.ceil_mode = ceil_mode;
  p.count_include_pad = count_include_pad;
  l.layer.params = p;
  return l;
}

OneLayer adaptive(PoolingParams::Kind kind, std::vector<int64_t> output_size) {
  OneLayer l;
  l.layer.name = "adaptive_pool";
  l.layer.kind = LayerKind::Pooling;
  PoolingParams p;
  p.kind = kind;
  p.adaptive = true;
  p.output_size = std::move(output_size);
  l.layer.params = p;
  return l;
}

TEST(VecPooling, MatchesReferenceInPlainFormat) {
  using K = PoolingParams;
  struct Case {
    OneLayer layer;
    Dims dims;
    std::string what;
  };
  std::vector<Case> cases;
  cases.push_back({pooling(K::Max, {3, 3}, {2, 2}, {1, 1}), {2, 5, 12, 11}, "max 3x3 s2 p1"});
  cases.push_back({pooling(K::Average, {3, 3}, {1, 1}, {1, 1}), {1, 4, 7, 7}, "avg 3x3 p1 count pad"});
  cases.push_back({pooling(K::Average, {3, 3}, {2, 2}, {1, 1}, {}, true, false), {1, 3, 8, 9}, "avg ceil no pad"});
  cases.push_back({pooling(K::Max, {2, 2}, {1, 1}, {0, 0}, {2, 2}), {1, 3, 9, 8}, "max dilation 2"});
  cases.push_back({pooling(K::Max, {3}, {2}, {1}), {2, 6, 17}, "max 1d"});
  cases.push_back({pooling(K::Average, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}), {1, 3, 4, 6, 6}, "avg 3d"});
  cases.push_back({adaptive(K::Average, {1, 1}), {2, 24, 7, 7}, "global average"});
  cases.push_back({adaptive(K::Average, {3, 3}), {1, 5, 7, 8}, "adaptive avg 3x3 of 7x8"});
  cases.push_back({adaptive(K::Max, {2, 3}), {1, 5, 5, 7}, "adaptive max"});
  for (const Case& c : cases) check_against_reference(c.layer, "vec", {c.dims}, {{c.dims}}, 1e-5, 1e-6, c.what);
}

TEST(VecPooling, ReadsAndWritesTheInputsFormat) {
  ThreadPool pool(2);
  std::vector<std::pair<OneLayer, Dims>> cases{
      {pooling(PoolingParams::Max, {3, 3}, {2, 2}, {1, 1}), {1, 20, 9, 9}},
      {pooling(PoolingParams::Max, {2, 2}, {1, 1}, {0, 0}, {2, 2}), {1, 20, 9, 8}},
      {adaptive(PoolingParams::Average, {1, 1}), {2, 19, 5, 6}},
      // a global pool split over the threads, one plane per task
      {adaptive(PoolingParams::Average, {1, 1}), {1, 64, 28, 28}},
      {pooling(PoolingParams::Average, {2, 2, 2}, {1, 1, 1}, {1, 0, 1}), {1, 9, 3, 4, 5}}};
  for (TensorFormat format : {TensorFormat::ChannelsLast, TensorFormat::Blocked8c, TensorFormat::Blocked16c}) {
    for (const auto& [layer, d] : cases) {
      std::string what = std::string(tensor_format_name(format)) + " rank " + std::to_string(d.size());
      Dims yd = layer.output_dims({d});
      LayerInfo info = layer.info({d});
      info.inputs[0].format = info.outputs[0].format = format;
      const KernelRow& f = row(LayerKind::Pooling, "vec");
      TacticFormats formats = f.formats(info);
      EXPECT_EQ(formats.inputs.at(0), format) << what;
      EXPECT_EQ(formats.outputs.at(0), format) << what;
      auto kernel = f.create(info);
      std::vector<std::vector<float>> plain{random_floats(static_cast<size_t>(numel(d)), 7)};
      std::vector<float> want = run_reference(layer, plain, {d});
      std::vector<float> x = to_format(plain[0], d, format);
      std::vector<float> y(static_cast<size_t>(format_numel(format, yd)), std::nanf(""));
      KernelArgs args;
      args.inputs.push_back(TensorView{x.data(), DType::Float32, d, format});
      args.outputs.push_back(TensorView{y.data(), DType::Float32, yd, format});
      args.pool = &pool;
      kernel->execute(args);
      expect_allclose(from_format(y, yd, format), want, 1e-5, 1e-6, what);
    }
  }
}

TEST(VecPooling, MaxPropagatesNan) {
  OneLayer l = pooling(PoolingParams::Max, {2, 2}, {2, 2}, {0, 0});
  Dims d{1, 1, 2, 4};
  LayerInfo info = l.info({d});
  auto kernel = row(LayerKind::Pooling, "vec").create(info);
  std::vector<std::vector<float>> x{{1, std::nanf(""), 5, 6, 3, 4, 7, 8}};
  ThreadPool pool(1);
  std::vector<float> y = run(*kernel, nullptr, l, x, {d}, &pool);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(std::isnan(y[0])) << "max over {1, NaN, 3, 4}: torch gives NaN";
  EXPECT_EQ(y[1], 8.0f);
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
