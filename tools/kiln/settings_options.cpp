#include "settings_options.h"

#include "kiln/conversion/known_ops.h"
#include "kiln/settings/flags.h"
#include "kiln/support/error.h"

namespace kiln::cli {

void add_settings_flags(CLI::App& app, const std::shared_ptr<SettingsFlags>& flags) {
  for (const settings::SettingsFlag& flag : settings::settings_flags()) {
    const std::string name = flag.name;
    if (flag.is_switch) {
      app.add_flag_callback(
          name, [flags, name]() { flags->emplace_back(name, ""); }, flag.help);
    } else {
      app.add_option_function<std::string>(
          name, [flags, name](const std::string& value) { flags->emplace_back(name, value); }, flag.help);
    }
  }
}

void apply_settings_flags(settings::CompilationSettings& settings, const SettingsFlags& flags) {
  for (const auto& [key, value] : flags) {
    KILN_CHECK(settings::apply_settings_flag(settings, key, value), InvalidInput, "unknown flag ", key);
  }
  std::string unknown;
  for (const std::string& op : conversion::unknown_ops(settings.torch_executed_ops)) {
    unknown += (unknown.empty() ? "'" : ", '") + op + "'";
  }
  KILN_CHECK(
      unknown.empty(), InvalidInput, "--torch-executed-ops: unknown operator ", unknown,
      " (neither in Kiln's op schema table nor converted; `kiln converters` lists the converted ones)");
}

}  // namespace kiln::cli
