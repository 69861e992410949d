// The real-number kind (value_kinds.h: Real<Max>, a finite number in (0, Max]) through its flag and its JSON
// form, on the settings that use it: calibration_percentile (0, 100] and reduced_precision_min_cosine (0, 1].
// A flag value is the whole string as std::from_chars reads it, so everything else (spaces, signs, hex, nan,
// inf, overflow, a locale's decimal comma, trailing text) is a one-line error naming the flag and the value.

#include <locale>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/settings/cache_key.h"
#include "kiln/settings/flags.h"
#include "kiln/settings/settings_json.h"
#include "kiln/support/error.h"

namespace kiln::settings {
namespace {

// The error `apply_settings_flag(flag, value)` throws ("no error" when it does not).
std::string flag_error(std::string_view flag, std::string_view value) {
  CompilationSettings s;
  try {
    apply_settings_flag(s, flag, value);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string json_error(const std::string& text) {
  try {
    settings_from_json(nlohmann::json::parse(text));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(RealSetting, DefaultsAreTheBuiltInConstants) {
  const CompilationSettings s;
  EXPECT_EQ(s.calibration_percentile, 99.99);
  EXPECT_EQ(s.reduced_precision_min_cosine, 0.999);
}

TEST(RealSetting, FlagsTakeDecimalNumbersInRange) {
  CompilationSettings s;
  EXPECT_TRUE(apply_settings_flag(s, "--calibration-percentile", "99.9"));
  EXPECT_EQ(s.calibration_percentile, 99.9);
  EXPECT_TRUE(apply_settings_flag(s, "--calibration-percentile", "100"));
  EXPECT_EQ(s.calibration_percentile, 100.0);
  EXPECT_TRUE(apply_settings_flag(s, "--calibration-percentile", "1e2"));
  EXPECT_EQ(s.calibration_percentile, 100.0);
  EXPECT_TRUE(apply_settings_flag(s, "--calibration-percentile", "0.001"));
  EXPECT_EQ(s.calibration_percentile, 0.001);
  EXPECT_TRUE(apply_settings_flag(s, "reduced_precision_min_cosine", "0.9999"));
  EXPECT_EQ(s.reduced_precision_min_cosine, 0.9999);
  EXPECT_TRUE(apply_settings_flag(s, "--reduced-precision-min-cosine", "1"));
  EXPECT_EQ(s.reduced_precision_min_cosine, 1.0);
  EXPECT_FALSE(is_settings_switch("--calibration-percentile"));
}

TEST(RealSetting, HostileFlagValuesAreOneLineErrorsNamingFlagAndValue) {
  std::vector<std::string> hostile = {"",      "nan",    "NaN",   "-nan", "inf", "-inf",   "infinity",
                                      "1e999", "-1e999", "0x1p3", "0x10", " 5",  "5 ",     "5abc",
                                      "+5",    "5,5",    "0",     "-0",   "-1",  "100.01", "1e-400",
                                      "5\n",   "..5",    "5e",    "1e+",  "--5", "abc"};
  hostile.push_back(std::string("5\0x", 3));  // a NUL inside the value
  for (const std::string& value : hostile) {
    const std::string err = flag_error("--calibration-percentile", value);
    EXPECT_NE(err.find("--calibration-percentile: expected a number in (0, 100], got '"), std::string::npos)
        << "'" << value << "': " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  EXPECT_NE(flag_error("--calibration-percentile", "nan").find("got 'nan'"), std::string::npos);
  EXPECT_NE(flag_error("--reduced-precision-min-cosine", "1.0001")
                .find("--reduced-precision-min-cosine: expected a number in (0, 1], got '1.0001'"),
            std::string::npos);
  EXPECT_NE(flag_error("--reduced-precision-min-cosine", "0").find("expected a number in (0, 1]"),
            std::string::npos);
}

TEST(RealSetting, JsonTakesNumbersInRangeAndNamesTheKeyOtherwise) {
  EXPECT_EQ(
      settings_from_json(nlohmann::json::parse(R"({"calibration_percentile": 50})")).calibration_percentile,
      50.0);
  EXPECT_EQ(settings_from_json(nlohmann::json::parse(R"({"reduced_precision_min_cosine": 0.99})"))
                .reduced_precision_min_cosine,
            0.99);
  for (const char* bad : {R"({"calibration_percentile": 0})", R"({"calibration_percentile": -3})",
                          R"({"calibration_percentile": 100.5})", R"({"calibration_percentile": 1e308})",
                          R"({"calibration_percentile": "99"})", R"({"calibration_percentile": true})",
                          R"({"calibration_percentile": null})", R"({"calibration_percentile": [99]})"}) {
    EXPECT_NE(json_error(bad).find("settings: 'calibration_percentile' expects a number in (0, 100], got"),
              std::string::npos)
        << bad << ": " << json_error(bad);
  }
  EXPECT_NE(json_error(R"({"reduced_precision_min_cosine": 2})")
                .find("'reduced_precision_min_cosine' expects a number in (0, 1], got number 2"),
            std::string::npos);
  // A NaN can only come from C++ (JSON text has none): refused all the same.
  CompilationSettings s;
  EXPECT_THROW(set_setting(s, "calibration_percentile", nlohmann::json(std::nan(""))), Error);
}

// A value survives JSON (archives, the Python binding) to the last bit; one left out (an archive written
// before the setting existed) is the default.
TEST(RealSetting, JsonRoundTripsExactlyAndOldSettingsLoadTheDefault) {
  CompilationSettings s;
  s.calibration_percentile = 99.98999999999999;
  s.reduced_precision_min_cosine = 0.1 + 0.2;
  const CompilationSettings back = settings_from_json(nlohmann::json::parse(settings_to_json(s).dump()));
  EXPECT_EQ(back.calibration_percentile, s.calibration_percentile);
  EXPECT_EQ(back.reduced_precision_min_cosine, s.reduced_precision_min_cosine);
  nlohmann::json old = settings_to_json(CompilationSettings{});
  old.erase("calibration_percentile");
  old.erase("reduced_precision_min_cosine");
  const CompilationSettings loaded = settings_from_json(old);
  EXPECT_EQ(loaded.calibration_percentile, 99.99);
  EXPECT_EQ(loaded.reduced_precision_min_cosine, 0.999);
}

TEST(RealSetting, BothSettingsAreInTheEngineCacheKey) {
  const CompilationSettings base;
  CompilationSettings percentile = base, cosine = base;
  percentile.calibration_percentile = 99.9;
  cosine.reduced_precision_min_cosine = 0.9999;
  EXPECT_NE(engine_invariant_key(percentile), engine_invariant_key(base));
  EXPECT_NE(engine_invariant_key(cosine), engine_invariant_key(base));
  EXPECT_NE(engine_invariant_key(base).find("calibration_percentile 99.99\n"), std::string::npos);
}

// A C++ global locale whose decimal point is ',' changes neither what a flag reads nor the key's text.
struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
};

TEST(RealSetting, ParsingAndTheKeyDoNotDependOnTheLocale) {
  const std::locale before = std::locale::global(std::locale(std::locale::classic(), new CommaDecimal));
  CompilationSettings s;
  const bool parsed = apply_settings_flag(s, "--calibration-percentile", "99.5");
  const std::string comma = flag_error("--calibration-percentile", "99,5");
  const std::string key = engine_invariant_key(s);
  std::locale::global(before);
  EXPECT_TRUE(parsed);
  EXPECT_EQ(s.calibration_percentile, 99.5);
  EXPECT_NE(comma.find("expected a number"), std::string::npos) << comma;
  EXPECT_NE(key.find("calibration_percentile 99.5\n"), std::string::npos) << key;
}

}  // namespace
}  // namespace kiln::settings
