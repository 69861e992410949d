// The coverage report (text and JSON) and the shared settings flags.

#include "kiln/partitioning/coverage.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/partitioning/settings_flags.h"
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
  compiler::CompilationSettings s;
  s.min_block_size = 1;
  CoverageReport report = make_coverage_report(*g, s, reg);
  const std::string text = coverage_to_text(report);
  EXPECT_NE(text.find("4/7 ops supported"), std::string::npos) << text;
  EXPECT_NE(text.find("lx (aten.lgamma.default): no converter registered for aten.lgamma.default"),
            std::string::npos) << text;
  EXPECT_NE(text.find("3 segments, 2 engines"), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(coverage_to_json(report));
  EXPECT_EQ(j["ops_total"], 7);
  EXPECT_EQ(j["ops_supported"], 4);
  ASSERT_EQ(j["unsupported"].size(), 3u);
  EXPECT_EQ(j["unsupported"][2]["node"], "ld");
  EXPECT_EQ(j["unsupported"][2]["op"], "aten.lgamma.default");
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

TEST(SettingsFlags, ParsesEveryFlag) {
  compiler::CompilationSettings s;
  EXPECT_TRUE(apply_settings_flag(s, "--min-block-size", "3"));
  EXPECT_TRUE(apply_settings_flag(s, "torch_executed_ops", "aten.lgamma.default, aten.add"));
  EXPECT_TRUE(apply_settings_flag(s, "--require-full-compilation", ""));
  EXPECT_TRUE(apply_settings_flag(s, "--partitioner", "global"));
  EXPECT_TRUE(apply_settings_flag(s, "--assume-dynamic-shape-support", "true"));
  EXPECT_TRUE(apply_settings_flag(s, "--cpu-memory-budget", "2G"));
  EXPECT_TRUE(apply_settings_flag(s, "--backend", "cuda"));
  EXPECT_FALSE(apply_settings_flag(s, "--output", "x.kiln"));
  EXPECT_EQ(s.min_block_size, 3);
  EXPECT_EQ(s.torch_executed_ops, (std::set<std::string>{"aten.lgamma.default", "aten.add"}));
  EXPECT_TRUE(s.require_full_compilation);
  EXPECT_FALSE(s.use_fast_partitioner);
  EXPECT_TRUE(s.assume_dynamic_shape_support);
  EXPECT_EQ(s.cpu_memory_budget, int64_t{2} << 30);
  EXPECT_TRUE(s.enable_resource_partitioning);
  EXPECT_EQ(s.backend, "cuda");
  EXPECT_TRUE(is_settings_switch("--require-full-compilation"));
  EXPECT_FALSE(is_settings_switch("--min-block-size"));
  EXPECT_THROW(apply_settings_flag(s, "--min-block-size", "-1"), Error);
  EXPECT_THROW(apply_settings_flag(s, "--min-block-size", "3x"), Error);
  EXPECT_THROW(apply_settings_flag(s, "--partitioner", "best"), Error);
  EXPECT_THROW(apply_settings_flag(s, "--require-full-compilation", "maybe"), Error);
  EXPECT_THROW(apply_settings_flag(s, "--cpu-memory-budget", "0"), Error);
  // Engine-cache flags.
  compiler::CompilationSettings c;
  EXPECT_TRUE(apply_settings_flag(c, "--cache-dir", "/tmp/engines"));
  EXPECT_EQ(c.engine_cache_dir, "/tmp/engines");
  EXPECT_TRUE(c.cache_built_engines && c.reuse_cached_engines);
  EXPECT_FALSE(c.immutable_weights);
  EXPECT_TRUE(apply_settings_flag(c, "--cache-size", "1G"));
  EXPECT_EQ(c.engine_cache_size, int64_t{1} << 30);
  EXPECT_TRUE(apply_settings_flag(c, "--timing-cache", "/tmp/t.bin"));
  EXPECT_EQ(c.timing_cache_path, "/tmp/t.bin");
  EXPECT_TRUE(apply_settings_flag(c, "--no-cache", ""));
  EXPECT_FALSE(c.cache_built_engines || c.reuse_cached_engines);
  EXPECT_TRUE(c.timing_cache_path.empty());
  compiler::CompilationSettings r;
  EXPECT_TRUE(apply_settings_flag(r, "--refittable", ""));
  EXPECT_FALSE(r.immutable_weights);
  EXPECT_TRUE(is_settings_switch("--no-cache"));
  EXPECT_THROW(apply_settings_flag(c, "--cache-dir", ""), Error);
  EXPECT_THROW(apply_settings_flag(c, "--cache-size", "0"), Error);
  EXPECT_EQ(settings_flags_help().size(), 15u);
}

TEST(SettingsFlags, CudaGraphsAndTf32) {
  compiler::CompilationSettings s;
  EXPECT_FALSE(s.use_cuda_graphs);
  EXPECT_FALSE(s.allow_tf32);  // Kiln keeps fp32 exact unless asked (Torch-TensorRT allows TF32 by default)
  EXPECT_TRUE(is_settings_switch("--use-cuda-graphs"));
  EXPECT_TRUE(is_settings_switch("--allow-tf32"));
  EXPECT_TRUE(apply_settings_flag(s, "--use-cuda-graphs", ""));
  EXPECT_TRUE(apply_settings_flag(s, "allow_tf32", "true"));
  EXPECT_TRUE(s.use_cuda_graphs);
  EXPECT_TRUE(s.allow_tf32);
  EXPECT_TRUE(apply_settings_flag(s, "--allow-tf32", "off"));
  EXPECT_FALSE(s.allow_tf32);
  EXPECT_THROW(apply_settings_flag(s, "--use-cuda-graphs", "sometimes"), Error);
}

TEST(CompilationSettings, TorchTensorRTDefaults) {
  compiler::CompilationSettings s;
  EXPECT_EQ(s.min_block_size, 5);
  EXPECT_TRUE(s.torch_executed_ops.empty());
  EXPECT_FALSE(s.require_full_compilation);
  EXPECT_FALSE(s.assume_dynamic_shape_support);
  EXPECT_TRUE(s.use_fast_partitioner);
  EXPECT_FALSE(s.enable_resource_partitioning);
  EXPECT_FALSE(s.cpu_memory_budget.has_value());
  EXPECT_EQ(s.enabled_precisions, (std::set<DType>{DType::Float32}));
  EXPECT_TRUE(s.immutable_weights);
  EXPECT_EQ(s.engine_cache_size, int64_t{5} << 30);
}

}  // namespace
}  // namespace kiln::partitioning
