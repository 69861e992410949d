#include "kiln/settings/flags.h"

#include <gtest/gtest.h>

#include "kiln/settings/descriptors.h"
#include "kiln/settings/settings_json.h"
#include "kiln/support/error.h"
#include "settings/sample_values.h"

namespace kiln::settings {
namespace {

TEST(SettingsFlags, ParsesEveryFlag) {
  CompilationSettings s;
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
  CompilationSettings c;
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
  CompilationSettings r;
  EXPECT_TRUE(apply_settings_flag(r, "--refittable", ""));
  EXPECT_FALSE(r.immutable_weights);
  EXPECT_TRUE(is_settings_switch("--no-cache"));
  EXPECT_THROW(apply_settings_flag(c, "--cache-dir", ""), Error);
  EXPECT_THROW(apply_settings_flag(c, "--cache-size", "0"), Error);
  EXPECT_EQ(settings_flags().size(), 22u);
}

TEST(SettingsFlags, CudaGraphsAndTf32) {
  CompilationSettings s;
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

// Static-shape engines replay CUDA graphs unless --no-cuda-graphs, which also turns use_cuda_graphs off.
TEST(SettingsFlags, NoCudaGraphsTurnsBothGraphSettingsOff) {
  CompilationSettings s;
  EXPECT_TRUE(s.static_shape_cuda_graphs);
  EXPECT_TRUE(is_settings_switch("--no-cuda-graphs"));
  EXPECT_TRUE(apply_settings_flag(s, "--use-cuda-graphs", ""));
  EXPECT_TRUE(apply_settings_flag(s, "--no-cuda-graphs", ""));
  EXPECT_FALSE(s.use_cuda_graphs);
  EXPECT_FALSE(s.static_shape_cuda_graphs);
  CompilationSettings t;
  EXPECT_TRUE(apply_settings_flag(t, "--no-cuda-graphs", "false"));
  EXPECT_TRUE(t.static_shape_cuda_graphs);
}

TEST(CompilationSettings, TorchTensorRTDefaults) {
  CompilationSettings s;
  EXPECT_EQ(s.min_block_size, 5);
  EXPECT_TRUE(s.torch_executed_ops.empty());
  EXPECT_FALSE(s.require_full_compilation);
  EXPECT_FALSE(s.assume_dynamic_shape_support);
  EXPECT_TRUE(s.use_fast_partitioner);
  EXPECT_FALSE(s.enable_resource_partitioning);
  EXPECT_FALSE(s.cpu_memory_budget.has_value());
  EXPECT_EQ(s.enabled_precisions, (std::set<settings::Precision>{settings::Precision::F32}));
  EXPECT_TRUE(s.immutable_weights);
  EXPECT_EQ(s.engine_cache_size, int64_t{5} << 30);
}

// Every row flag parses its setting's non-default value (written as a command line would) into that setting.
TEST(SettingsFlags, EveryRowFlagSetsItsSetting) {
  int flagged = 0;
  for (const SettingDescriptor& d : descriptors()) {
    if (d.flag.empty()) continue;
    ++flagged;
    const nlohmann::json value = testing::non_default_value(d);
    std::string text;
    if (value.is_boolean()) {
      text = value.get<bool>() ? "" : "false";
    } else if (value.is_array()) {
      for (const nlohmann::json& e : value) text += (text.empty() ? "" : ",") + e.get<std::string>();
    } else if (value.is_string()) {
      text = value.get<std::string>();
    } else {
      text = value.dump();
    }
    CompilationSettings s;
    EXPECT_TRUE(apply_settings_flag(s, d.flag, text)) << d.flag;
    EXPECT_EQ(get_setting(s, d.name), value) << d.flag << " " << text;
    EXPECT_EQ(is_settings_switch(d.flag), d.type == "bool") << d.flag;
  }
  EXPECT_EQ(flagged, 16);
}

TEST(SettingsFlags, NamesAreUniqueAndHelped) {
  std::set<std::string> names;
  for (const SettingsFlag& f : settings_flags()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_EQ(f.is_switch, f.values.empty()) << f.name;
  }
}

TEST(SettingsFlags, BadValuesNameTheFlag) {
  CompilationSettings s;
  try {
    apply_settings_flag(s, "--backend", "tpu");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--backend: expected cpu or cuda, got 'tpu'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(apply_settings_flag(s, "--min-block-size", "99999999999999999999"), Error);
}

// Settings are saved as JSON (the .kiln's compile settings, MutableModule archives), which holds only UTF-8: a
// text flag with other bytes is an error naming the flag up front, not a JSON library exception when the compile
// is done.
TEST(SettingsFlags, TextThatIsNotUtf8IsAnErrorNamingTheFlag) {
  for (const char* flag : {"--timing-cache", "--torch-executed-ops", "--cache-dir", "--calibration"}) {
    CompilationSettings s;
    try {
      apply_settings_flag(s, flag, "/tmp/\xff\xfe");
      ADD_FAILURE() << flag << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(flag) + ": expected UTF-8 text, got '/tmp/\\xff\\xfe'"),
                std::string::npos)
          << e.what();
    }
    EXPECT_NO_THROW(nlohmann::json(settings_to_json(s)).dump()) << flag;
  }
  CompilationSettings s;
  EXPECT_TRUE(apply_settings_flag(s, "--timing-cache", "/tmp/caf\xc3\xa9.bin"));  // UTF-8 is kept as given
  EXPECT_EQ(s.timing_cache_path, "/tmp/caf\xc3\xa9.bin");
}

}  // namespace
}  // namespace kiln::settings
