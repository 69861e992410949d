// The coverage report (text and JSON) and the shared settings flags.

#include "kiln/partitioning/coverage.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/support/error.h"
#include "partitioning/test_graphs.h"

namespace kiln::partitioning {
namespace {

using testing::parse;
using testing::register_stubs;

TEST(Coverage, ReportsOpsReasonsAndSegments) {
  auto g = parse(testing::kThreeVsSeven);
  conversion::ConverterRegistry reg;
  register_stubs(reg, {"aten.add.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.cat.default"});
  settings::CompilationSettings s;
  s.min_block_size = 1;
  CoverageReport report = make_coverage_report(*g, s, reg);
  const std::string text = coverage_to_text(report);
  EXPECT_NE(text.find("4/7 ops supported"), std::string::npos) << text;
  const std::string why = "no converter registered for aten.special_airy_ai.default";
  EXPECT_NE(text.find("lx (aten.special_airy_ai.default): " + why), std::string::npos) << text;
  EXPECT_NE(text.find("3 segments, 2 engines"), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(coverage_to_json(report));
  EXPECT_EQ(j["ops_total"], 7);
  EXPECT_EQ(j["ops_supported"], 4);
  ASSERT_EQ(j["unsupported"].size(), 3u);
  EXPECT_EQ(j["unsupported"][2]["node"], "ld");
  EXPECT_EQ(j["unsupported"][2]["op"], "aten.special_airy_ai.default");
  ASSERT_EQ(j["segments"].size(), 3u);
  EXPECT_EQ(j["segments"][0]["kind"], "engine");
  EXPECT_EQ(j["segments"][0]["backend"], "cpu");
  EXPECT_EQ(j["segments"][0]["nodes"], 3);
  EXPECT_EQ(j["segments"][1]["kind"], "torch");
  EXPECT_EQ(j["segments"][1]["name"], "_run_on_gpu_1");
  EXPECT_FALSE(j.contains("error"));

  // require_full_compilation: the report carries the error instead of throwing.
  s.require_full_compilation = true;
  report = make_coverage_report(*g, s, reg);
  EXPECT_TRUE(report.segments.empty());
  EXPECT_NE(report.error.find("3 nodes are not supported"), std::string::npos) << report.error;
  EXPECT_TRUE(nlohmann::json::parse(coverage_to_json(report)).contains("error"));
}

}  // namespace
}  // namespace kiln::partitioning
