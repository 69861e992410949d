#include "kiln/settings/value_kinds.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "kiln/support/error.h"
#include "settings/flag_values.h"

namespace kiln::settings {
namespace {

using nlohmann::json;

/// The value as the error shows it: its JSON text, cut short.
std::string shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

[[noreturn]] void wrong_type(const SettingInfo& info, std::string_view expected, const json& value) {
  KILN_FAIL(InvalidInput, "settings: '", info.name, "' expects ", expected, ", got ", value.type_name(), " ",
            shown(value));
}

std::string choice_from_json(const json& value, const SettingInfo& info, std::string_view expected) {
  if (!value.is_string()) wrong_type(info, expected, value);
  const std::string s = value.get<std::string>();
  const std::vector<std::string> all = detail::split_choices(info.values);
  if (std::find(all.begin(), all.end(), s) == all.end()) wrong_type(info, expected, value);
  return s;
}

std::vector<std::string> string_list_from_json(const json& value, const SettingInfo& info,
                                               std::string_view expected) {
  if (!value.is_array()) wrong_type(info, expected, value);
  std::vector<std::string> out;
  for (const json& element : value) {
    if (!element.is_string()) wrong_type(info, expected, value);
    out.push_back(element.get<std::string>());
  }
  return out;
}

/// The comma-separated names of a flag value, spaces removed, empty ones skipped.
std::vector<std::string> comma_list(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string item(value.substr(0, comma));
    item.erase(std::remove_if(item.begin(), item.end(), [](unsigned char c) { return std::isspace(c); }),
               item.end());
    if (!item.empty()) out.push_back(std::move(item));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

std::string one_of(const SettingInfo& info) {
  std::string out = "one of ";
  const std::vector<std::string> all = detail::split_choices(info.values);
  for (size_t i = 0; i < all.size(); ++i) out += (i == 0 ? "" : ", ") + all[i];
  return out;
}

int64_t integer_from_json(const json& value, const SettingInfo& info, int64_t min, int64_t max) {
  if (!value.is_number_integer()) wrong_type(info, "int", value);
  const bool in_range = value.is_number_unsigned()
                            ? value.get<uint64_t>() <= static_cast<uint64_t>(max)
                            : value.get<int64_t>() >= min && value.get<int64_t>() <= max;
  if (!in_range) wrong_type(info, "an int in range", value);
  return value.get<int64_t>();
}

}  // namespace

template <class T>
json Integer<T>::to_json(T value) {
  return value;
}
template <class T>
T Integer<T>::from_json(const json& value, const SettingInfo& info) {
  return static_cast<T>(
      integer_from_json(value, info, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}
template <class T>
void Integer<T>::apply_flag(T& field, std::string_view value, const SettingInfo& info) {
  field = static_cast<T>(detail::parse_count(info.flag, value, false, std::numeric_limits<T>::max()));
}
template struct Integer<int>;
template struct Integer<int64_t>;

json Bool::to_json(bool value) { return value; }
bool Bool::from_json(const json& value, const SettingInfo& info) {
  if (!value.is_boolean()) wrong_type(info, kType, value);
  return value.get<bool>();
}
void Bool::apply_flag(bool& field, std::string_view value, const SettingInfo& info) {
  field = detail::parse_switch(info.flag, value);
}

json Bytes::to_json(int64_t value) { return value; }
int64_t Bytes::from_json(const json& value, const SettingInfo& info) {
  return integer_from_json(value, info, INT64_MIN, INT64_MAX);
}
void Bytes::apply_flag(int64_t& field, std::string_view value, const SettingInfo& info) {
  field = detail::parse_positive_bytes(info.flag, value);
}

json OptionalBytes::to_json(const std::optional<int64_t>& value) { return value ? json(*value) : json(); }
std::optional<int64_t> OptionalBytes::from_json(const json& value, const SettingInfo& info) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_number_integer()) wrong_type(info, "int or null", value);
  return integer_from_json(value, info, INT64_MIN, INT64_MAX);
}
void OptionalBytes::apply_flag(std::optional<int64_t>& field, std::string_view value,
                               const SettingInfo& info) {
  field = detail::parse_positive_bytes(info.flag, value);
}

template <int Max>
json Real<Max>::to_json(double value) {
  return value;
}
template <int Max>
double Real<Max>::from_json(const json& value, const SettingInfo& info) {
  const std::string expected = "a number in (0, " + detail::shortest_decimal(Max) + "]";
  if (!value.is_number()) wrong_type(info, expected, value);
  const double x = value.get<double>();
  if (!(std::isfinite(x) && x > 0 && x <= Max)) wrong_type(info, expected, value);
  return x;
}
template <int Max>
void Real<Max>::apply_flag(double& field, std::string_view value, const SettingInfo& info) {
  field = detail::parse_real(info.flag, value, Max);
}
template struct Real<1>;
template struct Real<100>;

json Text::to_json(const std::string& value) { return value; }
std::string Text::from_json(const json& value, const SettingInfo& info) {
  if (!value.is_string()) wrong_type(info, kType, value);
  return value.get<std::string>();
}
void Text::apply_flag(std::string& field, std::string_view value, const SettingInfo& info) {
  field = detail::parse_text(info.flag, value);
}

json Choice::to_json(const std::string& value) { return value; }
std::string Choice::from_json(const json& value, const SettingInfo& info) {
  return choice_from_json(value, info, one_of(info));
}
void Choice::apply_flag(std::string& field, std::string_view value, const SettingInfo& info) {
  detail::check_choice(info.flag, value, info.values);
  field = std::string(value);
}

json OpSet::to_json(const std::set<std::string>& value) { return value; }
std::set<std::string> OpSet::from_json(const json& value, const SettingInfo& info) {
  const std::vector<std::string> names = string_list_from_json(value, info, kType);
  return {names.begin(), names.end()};
}
void OpSet::apply_flag(std::set<std::string>& field, std::string_view value, const SettingInfo& info) {
  for (std::string& op : comma_list(value)) field.insert(detail::parse_text(info.flag, op));
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::F32: return "f32";
    case Precision::F16: return "f16";
    case Precision::BF16: return "bf16";
    case Precision::I8: return "i8";
    case Precision::F8: return "f8";
  }
  return "?";
}

std::optional<Precision> precision_from_name(std::string_view name) {
  for (Precision p : {Precision::F32, Precision::F16, Precision::BF16, Precision::I8, Precision::F8}) {
    if (name == precision_name(p)) return p;
  }
  return std::nullopt;
}

json Precisions::to_json(const std::set<Precision>& value) {
  std::vector<std::string> names;
  for (Precision p : value) names.push_back(precision_name(p));
  return names;
}
std::set<Precision> Precisions::from_json(const json& value, const SettingInfo& info) {
  const std::string expected = "a list of " + one_of(info);
  std::set<Precision> out;
  for (const std::string& name : string_list_from_json(value, info, expected)) {
    const std::vector<std::string> all = detail::split_choices(info.values);
    if (std::find(all.begin(), all.end(), name) == all.end()) wrong_type(info, expected, value);
    out.insert(*precision_from_name(name));
  }
  return out;
}
void Precisions::apply_flag(std::set<Precision>& field, std::string_view value, const SettingInfo& info) {
  field.clear();
  for (const std::string& name : comma_list(value)) {
    detail::check_choice(info.flag, name, info.values);
    field.insert(*precision_from_name(name));
  }
}

}  // namespace kiln::settings
