// Numeric check: a partitioned graph, with its segments inlined, computes what the original graph computes,
// through the runtime's reference executor (built only with KILN_WITH_TORCH).

#include <gtest/gtest.h>

#include <random>

#include "kiln/partitioning/partitioners.h"
#include "partitioning/test_graphs.h"

#ifdef KILN_PARTITIONING_WITH_REFERENCE
#include "kiln/runtime/libtorch_node_executor.h"
#endif

namespace kiln::partitioning {
namespace {

std::vector<HostTensor> random_inputs(const ir::Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  // Positive values keep div finite; any values would do since both sides run the same ops.
  std::uniform_real_distribution<float> dist(0.1f, 3.0f);
  std::vector<HostTensor> out;
  for (const ir::Value* v : g.inputs()) {
    std::vector<int64_t> sizes = *v->meta().static_sizes();
    std::vector<float> data(static_cast<size_t>(checked_numel(sizes)));
    for (float& x : data) x = dist(rng);
    out.push_back(HostTensor::from_floats(data, sizes));
  }
  return out;
}

TEST(PartitionReference, PartitionedGraphsComputeTheOriginalFunction) {
#ifndef KILN_PARTITIONING_WITH_REFERENCE
  GTEST_SKIP() << "built without the runtime's reference executor (KILN_WITH_TORCH=OFF)";
#else
  conversion::ConverterRegistry reg;
  testing::register_stubs(reg, {"aten.add.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.cat.default",
                                "aten.relu.default", "aten.cos.default"});
  const std::vector<std::string> graphs = {testing::kThreeVsSeven, R"(graph(%x: f32[8], %y: f32[8]) {
  %r: f32[8] = aten.relu.default(self=%x)
  %l: f32[8] = aten.special_airy_ai.default(x=%r)
  %m: f32[8] = aten.mul.Tensor(self=%r, other=%y)
  %c: f32[8] = aten.cos.default(self=%m)
  %a: f32[8] = aten.add.Tensor(self=%l, other=%c, alpha=1)
  return (%a, %m, %y, %l)
}
)"};
  settings::CompilationSettings s;
  s.min_block_size = 1;
  for (const std::string& text : graphs) {
    auto g = testing::parse(text);
    const std::vector<HostTensor> inputs = random_inputs(*g, 1234);
    const std::vector<HostTensor> want = runtime::run_in_libtorch(*g, inputs);
    for (bool fast : {true, false}) {
      PartitionResult r = fast ? fast_partition(*g, s, reg) : global_partition(*g, s, reg);
      const std::vector<HostTensor> got = runtime::run_in_libtorch(*flatten_partitions(*r.graph), inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i].sizes(), want[i].sizes());
        // Tolerance 0: both sides run the same operators on the same inputs in libtorch, so results are
        // bitwise identical; any difference means the partition changed the computation.
        for (int64_t k = 0; k < want[i].numel(); ++k) {
          EXPECT_EQ(got[i].get_as_double(k), want[i].get_as_double(k)) << "output " << i << " element " << k;
        }
      }
    }
  }
#endif
}

}  // namespace
}  // namespace kiln::partitioning
