#include "kiln/settings/descriptors.h"

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "kiln/settings/flags.h"
#include "kiln/settings/settings_json.h"

namespace kiln::settings {
namespace {

std::string read_doc(const std::string& name) {
  std::ifstream in(std::string(KILN_TEST_DATA_DIR) + "/../../docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SettingDescriptors, CoverTheTable) {
  const std::vector<SettingDescriptor> all = descriptors();
  const nlohmann::json defaults = settings_to_json(CompilationSettings{});
  ASSERT_EQ(all.size(), defaults.size());
  std::set<std::string> names;
  const std::set<std::string> types = {"bool", "int", "optional[int]", "float", "str", "list[str]"};
  for (const SettingDescriptor& d : all) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    EXPECT_TRUE(types.count(d.type)) << d.name << ": " << d.type;
    EXPECT_EQ(d.default_value, defaults.at(d.name)) << d.name;
    EXPECT_FALSE(d.help.empty()) << d.name;
    EXPECT_FALSE(d.engine_invariant && d.runtime_only) << d.name;
  }
}

TEST(SettingDescriptors, StateTheirRoles) {
  std::set<std::string> invariant, runtime;
  for (const SettingDescriptor& d : descriptors()) {
    if (d.engine_invariant) invariant.insert(d.name);
    if (d.runtime_only) runtime.insert(d.name);
    if (d.name == "backend") {
      EXPECT_EQ(d.choices, (std::vector<std::string>{"cpu", "cuda"}));
    }
    if (d.name == "calibration_percentile") {
      EXPECT_EQ(d.flag, "--calibration-percentile");
      EXPECT_EQ(d.default_value, 99.99);
      EXPECT_EQ(d.type, "float");
    }
    if (d.name == "min_block_size") {
      EXPECT_EQ(d.flag, "--min-block-size");
      EXPECT_EQ(d.default_value, 5);
      EXPECT_EQ(d.type, "int");
    }
  }
  EXPECT_EQ(invariant, (std::set<std::string>{"enabled_precisions", "use_explicit_typing", "truncate_double",
                                              "calibrator", "calibration_percentile", "quantize_first_last",
                                              "reduced_precision_min_cosine", "backend", "workspace_size",
                                              "optimization_level", "num_avg_timing_iters", "threads", "allow_tf32",
                                              "use_cuda_graphs", "static_shape_cuda_graphs"}));
  // The CUDA-graph settings are engine settings too: an engine that will run without graphs counts the host's
  // enqueue time in its tactic contests (BuilderConfig::graphs_for_static).
  EXPECT_EQ(runtime, (std::set<std::string>{"lazy_engine_init"}));
}

// The docs list every setting (docs/settings.md) and every settings flag (docs/cli.md).
TEST(SettingDescriptors, DocsMentionEverySettingAndFlag) {
  const std::string settings_md = read_doc("settings.md");
  ASSERT_FALSE(settings_md.empty());
  for (const SettingDescriptor& d : descriptors()) {
    EXPECT_NE(settings_md.find("`" + d.name + "`"), std::string::npos)
        << d.name << " is not in docs/settings.md";
  }
  const std::string cli_md = read_doc("cli.md");
  ASSERT_FALSE(cli_md.empty());
  for (const SettingsFlag& f : settings_flags()) {
    EXPECT_NE(cli_md.find("`" + f.name), std::string::npos) << f.name << " is not in docs/cli.md";
  }
}

}  // namespace
}  // namespace kiln::settings
