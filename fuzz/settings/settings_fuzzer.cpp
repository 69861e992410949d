// libFuzzer target: the settings readers on arbitrary text, as a MutableModule archive, the Python binding and
// the command line hand them over. Input starting with '{' is a settings JSON object (settings_from_json, after
// the JSON depth check the archive reader does first); anything else is command-line flags, one `name=value` per
// line (apply_settings_flag: every kind's flag parser, the real numbers' included). Settings it accepts write to
// JSON that reads back to the same JSON and the same engine-cache key.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/fuzz_check.h"
#include "kiln/settings/cache_key.h"
#include "kiln/settings/flags.h"
#include "kiln/settings/settings_json.h"
#include "kiln/support/json_limits.h"

namespace {

using kiln::settings::CompilationSettings;

void check_round_trip(const CompilationSettings& settings) {
  kiln::fuzz::invariant("accepted settings write to JSON that reads back the same", [&] {
    const nlohmann::json once = kiln::settings::settings_to_json(settings);
    const CompilationSettings back = kiln::settings::settings_from_json(nlohmann::json::parse(once.dump()));
    return kiln::settings::settings_to_json(back) == once &&
           kiln::settings::engine_invariant_key(back) == kiln::settings::engine_invariant_key(settings);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CompilationSettings settings;
  if (!text.empty() && text.front() == '{') {
    if (!kiln::fuzz::accepts([&] { kiln::check_json_depth(text, "fuzz settings"); })) return 0;
    const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return 0;
    if (!kiln::fuzz::accepts([&] { settings = kiln::settings::settings_from_json(json); })) return 0;
  } else {
    std::string_view rest = text;
    while (!rest.empty()) {
      const size_t end = rest.find('\n');
      const std::string_view line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      const size_t eq = line.find('=');
      const std::string_view name = line.substr(0, eq);
      const std::string_view value = eq == std::string_view::npos ? std::string_view() : line.substr(eq + 1);
      kiln::fuzz::accepts([&] { kiln::settings::apply_settings_flag(settings, name, value); });
    }
  }
  check_round_trip(settings);
  return 0;
}
