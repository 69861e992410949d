#include "settings_options.h"

#include "kiln/partitioning/settings_flags.h"
#include "kiln/support/error.h"

namespace kiln::cli {

void add_settings_flags(CLI::App& app, const std::shared_ptr<SettingsFlags>& flags) {
  for (const auto& [flag, help] : partitioning::settings_flags_help()) {
    std::string name = flag.substr(0, flag.find(' '));
    if (partitioning::is_settings_switch(name)) {
      app.add_flag_callback(name, [flags, name]() { flags->emplace_back(name, ""); }, help);
    } else {
      app.add_option_function<std::string>(
          name, [flags, name](const std::string& value) { flags->emplace_back(name, value); }, help);
    }
  }
}

void apply_settings_flags(compiler::CompilationSettings& settings, const SettingsFlags& flags) {
  for (const auto& [key, value] : flags) {
    KILN_CHECK(partitioning::apply_settings_flag(settings, key, value), InvalidInput, "unknown flag ", key);
  }
}

}  // namespace kiln::cli
