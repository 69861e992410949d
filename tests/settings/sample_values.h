#pragma once
// A value other than the default for any setting, derived from its descriptor: lets tests cover every row of
// the settings table (JSON round trip, flags, cache key) without listing the settings again.

#include <string>

#include <nlohmann/json.hpp>

#include "kiln/settings/descriptors.h"

namespace kiln::settings::testing {

inline nlohmann::json non_default_value(const SettingDescriptor& d) {
  const nlohmann::json& def = d.default_value;
  if (d.type == "bool") return !def.get<bool>();
  if (d.type == "int") return def.get<int64_t>() + 7;
  if (d.type == "optional[int]") return 12345;
  if (d.type == "float") return def.get<double>() / 2;  // inside (0, max] when the default is
  if (d.type == "str") {
    for (const std::string& c : d.choices) {
      if (c != def.get<std::string>()) return c;
    }
    return def.get<std::string>() + "/elsewhere";
  }
  if (d.type == "list[str]") {
    if (!d.choices.empty()) return d.choices;  // every choice, in the order a set of them is written
    return nlohmann::json::array({"aten.add", "aten.relu.default"});
  }
  return nullptr;
}

}  // namespace kiln::settings::testing
