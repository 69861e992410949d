// Reformat kernels: the oneDNN reorder against the reference reformat for every non-plain format at ranks
// 3-5, with channel counts that leave a padded tail in the blocked formats. Reformats only move values, so
// the comparison is exact (bytes, padding included), and Plain -> format -> Plain gives the input back.

#include <cstring>

#include "engine/backends/cpu/kernels/kernel_test_util.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::testing {
namespace {

Layer reformat(TensorFormat from, TensorFormat to) {
  Layer l;
  l.name = "reformat";
  l.kind = LayerKind::Reformat;
  l.params = ReformatParams{from, to};
  return l;
}

LayerInfo reformat_info(const Layer& l, const Dims& d) {
  const auto& p = l.get<ReformatParams>();
  LayerInfo info;
  info.layer = &l;
  info.inputs.push_back(TensorInfo{"in", DType::Float32, d, d, d, p.from});
  info.outputs.push_back(TensorInfo{"out", DType::Float32, d, d, d, p.to});
  return info;
}

/// Runs tactic `name` of `l` on `x`; the output buffer starts as NaNs so that unwritten padding shows.
std::vector<float> run_reformat(const Layer& l, const std::string& name, std::vector<float>& x, const Dims& d,
                                ThreadPool* pool) {
  const auto& p = l.get<ReformatParams>();
  auto kernel = row(LayerKind::Reformat, name).create(reformat_info(l, d));
  auto state = kernel->create_state();
  std::vector<float> y(static_cast<size_t>(format_numel(p.to, d)), std::nanf(""));
  KernelArgs args;
  args.inputs.push_back(TensorView{x.data(), DType::Float32, d, p.from});
  args.outputs.push_back(TensorView{y.data(), DType::Float32, d, p.to});
  args.pool = pool;
  args.state = state.get();
  kernel->execute(args);
  return y;
}

TEST(OnednnReformat, MatchesReferenceAndRoundTrips) {
  ThreadPool pool(2);
  const std::vector<Dims> shapes{{2, 5, 7}, {1, 12, 3, 4}, {2, 19, 2, 3, 2}, {1, 32, 5, 5}};
  uint32_t seed = 300;
  for (const Dims& d : shapes) {
    for (TensorFormat f : {TensorFormat::Blocked8c, TensorFormat::Blocked16c, TensorFormat::ChannelsLast}) {
      std::string what = std::string(tensor_format_name(f)) + " rank " + std::to_string(d.size()) + " C " +
                         std::to_string(d[1]);
      std::vector<float> x = random_floats(static_cast<size_t>(numel(d)), seed++);
      Layer to = reformat(TensorFormat::Plain, f), back = reformat(f, TensorFormat::Plain);
      ASSERT_TRUE(row(LayerKind::Reformat, "onednn").runs(reformat_info(to, d), nullptr)) << what;
      std::vector<float> a = run_reformat(to, "onednn", x, d, &pool), b = run_reformat(to, "ref", x, d, &pool);
      ASSERT_EQ(a.size(), b.size()) << what;
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what << ": onednn != ref";
      for (const char* name : {"onednn", "ref"}) {
        std::vector<float> r = run_reformat(back, name, a, d, &pool);
        ASSERT_EQ(r.size(), x.size());
        EXPECT_EQ(std::memcmp(r.data(), x.data(), x.size() * sizeof(float)), 0) << what << ": " << name << " round trip";
      }
    }
  }
}

TEST(OnednnReformat, KernelsRejectFormatsTheyCannotRead) {
  // A Plain-only kernel (the reference softmax) created with a blocked input is a clear error, not garbage.
  Layer l;
  l.name = "sm";
  l.kind = LayerKind::Softmax;
  l.params = SoftmaxParams{1, false};
  Dims d{1, 16, 4, 4};
  LayerInfo info;
  info.layer = &l;
  info.inputs.push_back(TensorInfo{"in", DType::Float32, d, d, d, TensorFormat::Blocked16c});
  info.outputs.push_back(TensorInfo{"out", DType::Float32, d, d, d});
  auto backend = create_backend("cpu", BackendOptions{1});
  EXPECT_THROW(backend->create_kernel(info, "ref"), kiln::Error);
  // A reformat whose tensors disagree with its params, likewise.
  Layer r = reformat(TensorFormat::Plain, TensorFormat::Blocked8c);
  LayerInfo bad = reformat_info(r, d);
  bad.outputs[0].format = TensorFormat::ChannelsLast;
  EXPECT_THROW(backend->create_kernel(bad, "onednn"), kiln::Error);
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
