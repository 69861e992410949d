#pragma once
// The kinds of value a compilation setting holds. A kind names the C++ field type, the type descriptors and
// errors show ("bool", "int", "optional[int]", "float", "str", "list[str]": Python's spelling, for the Python
// binding), and how a value is written to JSON, read from JSON and parsed from a command-line flag. Each row
// of the settings table (settings_table.h) names one kind; the generic code (JSON, flags, descriptors, cache
// key) calls these.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "kiln/support/dtype.h"

namespace kiln::settings {

/// A precision engines may compute in (the `enabled_precisions` setting; Torch-TensorRT's enabled_precisions
/// dtypes): fp32, fp16, bf16, INT8 and FP8 E4M3 (torch.float8_e4m3fn).
enum class Precision : uint8_t { F32, F16, BF16, I8, F8 };
/// Its name in settings: f32 f16 bf16 i8 f8.
const char* precision_name(Precision precision);
/// The precision of that name; std::nullopt when it is none.
std::optional<Precision> precision_from_name(std::string_view name);

/// Where a setting acts. Engine: it changes the engines built (engine-invariant: part of the engine-cache
/// key). Runtime: it changes only how the compiled module runs (stored in the module, never in a plan).
/// Compile: neither (partitioning, caches, logging).
enum class Scope { Compile, Engine, Runtime };

/// The constant part of one row of the table: what a kind's functions need to name the setting in errors.
struct SettingInfo {
  std::string_view name;  // the field name, also its JSON key and Python keyword
  std::string_view flag;  // the command-line flag without dashes, "" when it has none
  std::string_view
      values;  // the flag's value placeholder ("N", "FILE"); for a choice: the choices, '|'-separated
  Scope scope;
  std::string_view help;
};

/// On or off. JSON: true/false. Flag: a switch (no value, or true/false/1/0/yes/no/on/off).
struct Bool {
  using Field = bool;
  static constexpr std::string_view kType = "bool";
  static constexpr bool kSwitch = true;
  static nlohmann::json to_json(bool value);
  static bool from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(bool& field, std::string_view value, const SettingInfo& info);
};

/// An integer stored as T (int or int64_t). JSON: a number in T's range. Flag: a non-negative decimal
/// integer.
template <class T>
struct Integer {
  using Field = T;
  static constexpr std::string_view kType = "int";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(T value);
  static T from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(T& field, std::string_view value, const SettingInfo& info);
};
extern template struct Integer<int>;
extern template struct Integer<int64_t>;

/// A size in bytes. JSON: an integer. Flag: a positive integer with an optional K/M/G (binary) suffix.
struct Bytes {
  using Field = int64_t;
  static constexpr std::string_view kType = "int";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(int64_t value);
  static int64_t from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(int64_t& field, std::string_view value, const SettingInfo& info);
};

/// A size in bytes or unset. JSON: an integer or null. Flag: as Bytes.
struct OptionalBytes {
  using Field = std::optional<int64_t>;
  static constexpr std::string_view kType = "optional[int]";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(const std::optional<int64_t>& value);
  static std::optional<int64_t> from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(std::optional<int64_t>& field, std::string_view value, const SettingInfo& info);
};

/// A finite real number in (0, Max]. JSON: a number (an integer too). Flag: a decimal number, the whole value
/// as std::from_chars reads it (locale-independent; no spaces, no '+', no hex, no nan or inf). Max is an integer:
/// clang before 18 takes no floating-point template arguments.
template <int Max>
struct Real {
  using Field = double;
  static constexpr std::string_view kType = "float";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(double value);
  static double from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(double& field, std::string_view value, const SettingInfo& info);
};
extern template struct Real<1>;
extern template struct Real<100>;

/// Free text (a path). JSON: a string. Flag: the value as given ("" allowed), if it is UTF-8.
struct Text {
  using Field = std::string;
  static constexpr std::string_view kType = "str";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(const std::string& value);
  static std::string from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(std::string& field, std::string_view value, const SettingInfo& info);
};

/// One of the row's '|'-separated values. JSON: one of them as a string. Flag: one of them.
struct Choice {
  using Field = std::string;
  static constexpr std::string_view kType = "str";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(const std::string& value);
  static std::string from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(std::string& field, std::string_view value, const SettingInfo& info);
};

/// A set of operator names. JSON: a list of strings. Flag: comma-separated UTF-8 names, added to the set.
struct OpSet {
  using Field = std::set<std::string>;
  static constexpr std::string_view kType = "list[str]";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(const std::set<std::string>& value);
  static std::set<std::string> from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(std::set<std::string>& field, std::string_view value, const SettingInfo& info);
};

/// A set of precisions, each one of the row's '|'-separated names (precision_name). JSON: a list of those
/// names. Flag: comma-separated names, replacing the set.
struct Precisions {
  using Field = std::set<Precision>;
  static constexpr std::string_view kType = "list[str]";
  static constexpr bool kSwitch = false;
  static nlohmann::json to_json(const std::set<Precision>& value);
  static std::set<Precision> from_json(const nlohmann::json& json, const SettingInfo& info);
  static void apply_flag(std::set<Precision>& field, std::string_view value, const SettingInfo& info);
};

}  // namespace kiln::settings
