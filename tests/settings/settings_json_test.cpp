#include "kiln/settings/settings_json.h"

#include <gtest/gtest.h>

#include "kiln/settings/descriptors.h"
#include "kiln/support/error.h"
#include "settings/sample_values.h"

namespace kiln::settings {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    settings_from_json(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SettingsJson, EverySettingRoundTripsANonDefaultValue) {
  CompilationSettings s;
  for (const SettingDescriptor& d : descriptors()) {
    const nlohmann::json value = testing::non_default_value(d);
    ASSERT_NE(value, d.default_value) << d.name;
    set_setting(s, d.name, value);
    EXPECT_EQ(get_setting(s, d.name), value) << d.name;
  }
  const nlohmann::json j = settings_to_json(s);
  EXPECT_EQ(j.size(), descriptors().size());
  const CompilationSettings back = settings_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(settings_to_json(back), j);
  for (const SettingDescriptor& d : descriptors())
    EXPECT_EQ(j.at(d.name), testing::non_default_value(d)) << d.name;
}

TEST(SettingsJson, TheJsonFormIsUnchanged) {
  // Archives saved before the settings layer (MutableModule) hold these forms: they must still read.
  CompilationSettings s;
  s.enabled_precisions.insert(settings::Precision::F16);
  s.cpu_memory_budget = 1024;
  s.torch_executed_ops = {"aten.add"};
  const nlohmann::json j = settings_to_json(s);
  EXPECT_EQ(j.at("enabled_precisions"), nlohmann::json::parse(R"(["f32", "f16"])"));
  EXPECT_EQ(j.at("cpu_memory_budget"), 1024);
  EXPECT_TRUE(settings_to_json(CompilationSettings{}).at("cpu_memory_budget").is_null());
  EXPECT_EQ(j.at("torch_executed_ops"), nlohmann::json::parse(R"(["aten.add"])"));
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("engine_cache_size"), int64_t{5} << 30);
}

TEST(SettingsJson, MissingKeysKeepTheirDefaults) {
  const CompilationSettings s = settings_from_json(nlohmann::json::parse(R"({"min_block_size": 2})"));
  EXPECT_EQ(s.min_block_size, 2);
  EXPECT_EQ(settings_to_json(settings_from_json(nlohmann::json::object())),
            settings_to_json(CompilationSettings{}));
}

TEST(SettingsJson, UnknownKeysAndBadTypesNameTheKey) {
  EXPECT_NE(
      error_of(nlohmann::json::parse(R"({"min_blok_size": 2})")).find("unknown setting 'min_blok_size'"),
      std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::parse(R"({"allow_tf32": "yes"})"))
                .find("'allow_tf32' expects bool, got string"),
            std::string::npos);
  EXPECT_NE(
      error_of(nlohmann::json::parse(R"({"min_block_size": 2.5})")).find("'min_block_size' expects int"),
      std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::parse(R"({"optimization_level": 4294967296})"))
                .find("'optimization_level' expects an int in range"),
            std::string::npos);
  EXPECT_NE(
      error_of(nlohmann::json::parse(R"({"backend": "tpu"})")).find("'backend' expects one of cpu, cuda"),
      std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::parse(R"({"enabled_precisions": ["f32", "i4"]})"))
                .find("'enabled_precisions' expects a list of one of f32, f16, bf16, i8, f8"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::parse(R"({"torch_executed_ops": "aten.add"})"))
                .find("'torch_executed_ops' expects list[str]"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::parse(R"({"cpu_memory_budget": "1G"})"))
                .find("'cpu_memory_budget' expects int or null"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::parse("[1]")).find("expected a JSON object"), std::string::npos);
  CompilationSettings s;
  EXPECT_THROW(set_setting(s, "nosuch", true), Error);
  EXPECT_THROW(get_setting(s, "nosuch"), Error);
}

}  // namespace
}  // namespace kiln::settings
