// The engine-cache key and the settings: it changes exactly when an engine-invariant setting changes (every
// row of the settings table, so a new setting is covered by its row alone).

#include <gtest/gtest.h>

#include "kiln/compiler/engine_hash.h"
#include "kiln/ir/text.h"
#include "kiln/settings/descriptors.h"
#include "kiln/settings/settings_json.h"
#include "settings/sample_values.h"

namespace kiln::compiler {
namespace {

std::string settings_hash(const CompilationSettings& s) {
  static const std::unique_ptr<ir::Graph> g = ir::parse_graph(
      "graph(%x: f32[s0, 8]) {\n  symbol s0 in [1, 64] hint 4\n"
      "  %w: f32[4, 8] = parameter(\"fc.weight\")\n"
      "  %y: f32[s0, 4] = aten.matmul.default(self=%x, other=%w)\n  return (%y)\n}\n");
  return engine_segment_hash(*g, {{"s0", ir::SymRange{1, 64}}}, {{"s0", 4}}, s, "cpu test-device");
}

TEST(EngineSegmentHash, ChangesIffAnEngineInvariantSettingChanges) {
  const std::string base = settings_hash(CompilationSettings{});
  int invariant = 0;
  for (const settings::SettingDescriptor& d : settings::descriptors()) {
    CompilationSettings s;
    settings::set_setting(s, d.name, settings::testing::non_default_value(d));
    if (d.engine_invariant) {
      ++invariant;
      EXPECT_NE(settings_hash(s), base) << d.name << " is engine-invariant: the key must change";
    } else {
      EXPECT_EQ(settings_hash(s), base) << d.name << " does not change the engine: the key must not change";
    }
  }
  EXPECT_EQ(invariant, 15);  // (quantize_first_last is the last)
}

}  // namespace
}  // namespace kiln::compiler
