#include "kiln/settings/settings_json.h"

#include "kiln/settings/for_each_setting.h"
#include "kiln/support/error.h"

namespace kiln::settings {
namespace {

[[noreturn]] void unknown_setting(std::string_view name) {
  std::string known;
  for_each_setting([&](const SettingInfo& info, auto, auto) {
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  });
  KILN_FAIL(InvalidInput, "settings: unknown setting '", name, "' (settings: ", known, ")");
}

}  // namespace

nlohmann::json settings_to_json(const CompilationSettings& settings) {
  nlohmann::json out = nlohmann::json::object();
  for_each_setting([&](const SettingInfo& info, auto kind, auto member) {
    out[std::string(info.name)] = decltype(kind)::to_json(settings.*member);
  });
  return out;
}

CompilationSettings settings_from_json(const nlohmann::json& json) {
  KILN_CHECK(json.is_object(), InvalidInput, "settings: expected a JSON object, got ", json.type_name());
  CompilationSettings settings;
  for (const auto& [key, value] : json.items()) set_setting(settings, key, value);
  return settings;
}

void set_setting(CompilationSettings& settings, std::string_view name, const nlohmann::json& value) {
  bool found = false;
  for_each_setting([&](const SettingInfo& info, auto kind, auto member) {
    if (info.name != name) return;
    settings.*member = decltype(kind)::from_json(value, info);
    found = true;
  });
  if (!found) unknown_setting(name);
}

nlohmann::json get_setting(const CompilationSettings& settings, std::string_view name) {
  nlohmann::json out;
  bool found = false;
  for_each_setting([&](const SettingInfo& info, auto kind, auto member) {
    if (info.name != name) return;
    out = decltype(kind)::to_json(settings.*member);
    found = true;
  });
  if (!found) unknown_setting(name);
  return out;
}

}  // namespace kiln::settings
