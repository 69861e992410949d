#include "settings/flag_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "kiln/support/error.h"

namespace kiln::settings::detail {

bool parse_switch(std::string_view flag, std::string_view value) {
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v.empty() || v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  KILN_FAIL(InvalidInput, "--", flag, ": expected true or false, got '", value, "'");
}

int64_t parse_count(std::string_view flag, std::string_view value, bool byte_suffix, int64_t max) {
  int64_t multiplier = 1;
  std::string_view digits = value;
  if (byte_suffix && !digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K': multiplier = int64_t{1} << 10; break;
      case 'M': multiplier = int64_t{1} << 20; break;
      case 'G': multiplier = int64_t{1} << 30; break;
      default: break;
    }
    if (multiplier != 1) digits.remove_suffix(1);
  }
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  KILN_CHECK(!digits.empty() && ec == std::errc() && ptr == digits.data() + digits.size() && n >= 0,
             InvalidInput, "--", flag, ": expected a non-negative integer, got '", value, "'");
  KILN_CHECK(n <= max / multiplier, InvalidInput, "--", flag, ": value '", value, "' is too large");
  return n * multiplier;
}

std::string shortest_decimal(double max) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, max);
  return ec == std::errc() ? std::string(text, end) : std::string("?");
}

double parse_real(std::string_view flag, std::string_view value, double max) {
  double x = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  KILN_CHECK(!value.empty() && ec == std::errc() && ptr == value.data() + value.size() && std::isfinite(x) &&
                 x > 0 && x <= max,
             InvalidInput, "--", flag, ": expected a number in (0, ", shortest_decimal(max), "], got '", value,
             "'");
  return x;
}

std::string parse_text(std::string_view flag, std::string_view value) {
  std::string text(value);
  try {
    (void)nlohmann::json(text).dump();
  } catch (const nlohmann::json::type_error&) {
    KILN_FAIL(InvalidInput, "--", flag, ": expected UTF-8 text, got '", value, "'");
  }
  return text;
}

int64_t parse_positive_bytes(std::string_view flag, std::string_view value) {
  const int64_t bytes = parse_count(flag, value, true);
  KILN_CHECK(bytes > 0, InvalidInput, "--", flag, ": must be positive, got '", value, "'");
  return bytes;
}

std::vector<std::string> split_choices(std::string_view values) {
  std::vector<std::string> out;
  while (!values.empty()) {
    const size_t bar = values.find('|');
    out.emplace_back(values.substr(0, bar));
    if (bar == std::string_view::npos) break;
    values.remove_prefix(bar + 1);
  }
  return out;
}

void check_choice(std::string_view flag, std::string_view value, std::string_view choices) {
  const std::vector<std::string> all = split_choices(choices);
  if (std::find(all.begin(), all.end(), value) != all.end()) return;
  std::string expected;
  for (size_t i = 0; i < all.size(); ++i) {
    expected += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
  }
  KILN_FAIL(InvalidInput, "--", flag, ": expected ", expected, ", got '", value, "'");
}

}  // namespace kiln::settings::detail
