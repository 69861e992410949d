#include "kiln/settings/cache_key.h"

#include <nlohmann/json.hpp>

#include "kiln/settings/for_each_setting.h"

namespace kiln::settings {

std::string engine_invariant_key(const CompilationSettings& settings) {
  std::string key;
  for_each_setting([&](const SettingInfo& info, auto kind, auto member) {
    if (info.scope != Scope::Engine) return;
    key += std::string(info.name) + " " + decltype(kind)::to_json(settings.*member).dump() + "\n";
  });
  return key;
}

}  // namespace kiln::settings
