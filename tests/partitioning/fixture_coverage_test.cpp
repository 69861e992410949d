// Coverage and partitioning on the bundled fixtures, with stub converters for every op (the real converters
// come with the conversion layer) and tiny_convnet's lgamma forced to PyTorch by torch_executed_ops: the
// report must name exactly the ops that do not run in engines.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/frontend/program.h"
#include "kiln/partitioning/coverage.h"
#include "kiln/partitioning/partitioners.h"
#include "partitioning/test_graphs.h"

namespace kiln::partitioning {
namespace {

// Registers a dynamic-capable stub for every target in the graph (the fixtures have a dynamic batch
// dimension).
conversion::ConverterRegistry stubs_for(const ir::Graph& g) {
  conversion::ConverterRegistry reg;
  conversion::RegistrationOptions o;
  o.supports_dynamic_shapes = true;
  for (const ir::Node* n : g.nodes()) {
    const std::string name = ir::canonical_op_name(n->target());
    if (reg.contains(n->target())) continue;
    reg.register_converter(name, testing::stub_converter(), o);
  }
  return reg;
}

// min_block_size 1, lgamma in PyTorch.
settings::CompilationSettings lgamma_in_torch() {
  settings::CompilationSettings s;
  s.min_block_size = 1;
  s.torch_executed_ops = {"aten.lgamma.default"};
  return s;
}

TEST(FixtureCoverage, TinyConvnetReportsTheTorchExecutedLgammaOnly) {
  for (const char* file : {"model.pt2", "model_core_aten.pt2"}) {
    SCOPED_TRACE(file);
    frontend::Program p = frontend::load_program(std::string(KILN_TEST_DATA_DIR) + "/tiny_convnet/" + file);
    conversion::ConverterRegistry reg = stubs_for(*p.graph);
    const settings::CompilationSettings s = lgamma_in_torch();
    CoverageReport report = make_coverage_report(*p.graph, s, reg);
    EXPECT_EQ(report.support.total, static_cast<int64_t>(p.graph->num_nodes()));
    EXPECT_EQ(report.support.supported, report.support.total - 1);
    ASSERT_EQ(report.support.unsupported.size(), 1u);
    EXPECT_EQ(report.support.unsupported[0].op, "aten.lgamma.default");
    EXPECT_EQ(report.support.unsupported[0].status, SupportStatus::TorchExecuted);
    EXPECT_TRUE(report.error.empty()) << report.error;
    int torch_segments = 0;
    for (const SegmentInfo& seg : report.segments) {
      if (!seg.engine) {
        ++torch_segments;
        EXPECT_EQ(seg.nodes.size(), 1u);
      }
    }
    EXPECT_EQ(torch_segments, 1);
    nlohmann::json j = nlohmann::json::parse(coverage_to_json(report));
    EXPECT_EQ(j["unsupported"][0]["op"], "aten.lgamma.default");
    // Without dynamic-shape support every node with the dynamic batch falls back.
    conversion::ConverterRegistry static_only;
    for (const ir::OpName& t : reg.unique_targets()) {
      static_only.register_converter(ir::canonical_op_name(t), testing::stub_converter());
    }
    GraphSupport st = get_graph_converter_support(*p.graph, s, static_only);
    EXPECT_LT(st.supported, report.support.supported);
    for (const UnsupportedNode& u : st.unsupported) {
      if (u.op != "aten.lgamma.default") EXPECT_EQ(u.status, SupportStatus::DynamicShapes) << u.node;
    }
  }
}

TEST(FixtureCoverage, EveryFixturePartitionsIntoTheSameFunction) {
  for (const char* name : {"tiny_convnet", "tiny_encoder", "tiny_mlp", "tiny_resnet"}) {
    for (const char* file : {"model.pt2", "model_core_aten.pt2"}) {
      SCOPED_TRACE(std::string(name) + "/" + file);
      const std::string path = std::string(KILN_TEST_DATA_DIR) + "/" + name + "/" + file;
      if (!std::filesystem::exists(path)) continue;  // not every fixture has a Core ATen export
      frontend::Program p = frontend::load_program(path);
      conversion::ConverterRegistry reg = stubs_for(*p.graph);
      const settings::CompilationSettings s = lgamma_in_torch();
      for (bool fast : {true, false}) {
        PartitionResult r = fast ? fast_partition(*p.graph, s, reg) : global_partition(*p.graph, s, reg);
        testing::expect_same_function(*p.graph, *r.graph);
        // Only the torch-executed lgamma and impure ops may stay in PyTorch.
        for (const UnsupportedNode& u : r.support.unsupported) {
          EXPECT_TRUE(u.op == "aten.lgamma.default" || u.status == SupportStatus::Impure) << u.node << " " << u.op;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::partitioning
