#include "kiln/settings/flags.h"

#include <algorithm>

#include "kiln/settings/for_each_setting.h"
#include "settings/shorthand_flags.h"

namespace kiln::settings {
namespace {

std::string normalize_key(std::string_view key) {
  while (!key.empty() && key.front() == '-') key.remove_prefix(1);
  std::string k(key);
  std::replace(k.begin(), k.end(), '_', '-');
  return k;
}

}  // namespace

std::vector<SettingsFlag> settings_flags() {
  std::vector<SettingsFlag> out;
  for_each_setting([&](const SettingInfo& info, auto kind, auto) {
    if (info.flag.empty()) return;
    const bool is_switch = decltype(kind)::kSwitch;
    out.push_back({"--" + std::string(info.flag), is_switch ? "" : std::string(info.values),
                   std::string(info.help), is_switch});
  });
  for (const detail::ShorthandFlag& f : detail::shorthand_flags()) {
    out.push_back({"--" + std::string(f.name), std::string(f.values), std::string(f.help), f.values.empty()});
  }
  return out;
}

bool apply_settings_flag(CompilationSettings& settings, std::string_view key, std::string_view value) {
  const std::string k = normalize_key(key);
  bool applied = false;
  for_each_setting([&](const SettingInfo& info, auto kind, auto member) {
    if (applied || info.flag.empty() || info.flag != k) return;
    decltype(kind)::apply_flag(settings.*member, value, info);
    applied = true;
  });
  for (const detail::ShorthandFlag& f : detail::shorthand_flags()) {
    if (applied || f.name != k) continue;
    f.apply(settings, value);
    applied = true;
  }
  return applied;
}

bool is_settings_switch(std::string_view key) {
  const std::string name = "--" + normalize_key(key);
  for (const SettingsFlag& f : settings_flags()) {
    if (f.name == name) return f.is_switch;
  }
  return false;
}

}  // namespace kiln::settings
