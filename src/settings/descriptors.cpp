#include "kiln/settings/descriptors.h"

#include <type_traits>

#include "kiln/settings/for_each_setting.h"
#include "settings/flag_values.h"

namespace kiln::settings {

std::vector<SettingDescriptor> descriptors() {
  const CompilationSettings defaults;
  std::vector<SettingDescriptor> out;
  for_each_setting([&](const SettingInfo& info, auto kind, auto member) {
    using Kind = decltype(kind);
    SettingDescriptor d;
    d.name = info.name;
    d.type = Kind::kType;
    d.default_value = Kind::to_json(defaults.*member);
    d.help = info.help;
    if constexpr (std::is_same_v<Kind, Choice> || std::is_same_v<Kind, Precisions>) {
      d.choices = detail::split_choices(info.values);
    }
    if (!info.flag.empty()) d.flag = "--" + std::string(info.flag);
    d.engine_invariant = info.scope == Scope::Engine;
    d.runtime_only = info.scope == Scope::Runtime;
    out.push_back(std::move(d));
  });
  return out;
}

}  // namespace kiln::settings
