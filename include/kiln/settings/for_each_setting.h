#pragma once
// Visiting every row of the settings table with its kind and field: the one loop that the JSON form, the
// flags, the descriptors and the cache key are written with.

#include "kiln/settings/compilation_settings.h"

namespace kiln::settings {

/// Calls `visit(info, kind, member)` for every setting in table order: `info` is its SettingInfo, `kind` a
/// value of its kind (value_kinds.h; a tag whose static functions convert the field), `member` a pointer to
/// its field in CompilationSettings.
template <class Visit>
void for_each_setting(Visit&& visit) {
#define KILN_VISIT_SETTING(kind, name, default_value, flag, values, scope, help) \
  visit(SettingInfo{#name, flag, values, Scope::scope, help}, kind{}, &CompilationSettings::name);
  KILN_SETTINGS(KILN_VISIT_SETTING)
#undef KILN_VISIT_SETTING
}

}  // namespace kiln::settings
