#include "kiln/compiler/engine_hash.h"

#include <sstream>

#include "kiln/engine/plan.h"
#include "kiln/ir/graph_extract.h"
#include "kiln/ir/text.h"
#include "kiln/settings/cache_key.h"
#include "kiln/support/hash.h"

namespace kiln::compiler {
std::string canonical_segment_text(const ir::Graph& segment) {
  return ir::print_graph(*ir::canonical_copy(segment));
}

std::string engine_segment_hash(const ir::Graph& segment, const ir::SymRanges& symbol_ranges,
                                const std::map<std::string, int64_t>& symbol_hints,
                                const CompilationSettings& settings, const std::string& device) {
  std::ostringstream key;
  // The first line names the key's format: bump it when what the key covers changes, so that entries made
  // under the old format are misses, never wrong hits. v2: the settings part comes from the settings table.
  key << "kiln engine cache key v2\nplan format " << engine::kPlanFormatVersion << "\n";
  key << "device " << device << "\n" << settings::engine_invariant_key(settings);
  for (const auto& [symbol, range] : symbol_ranges) key << "range " << symbol << " " << range.min << " " << range.max << "\n";
  for (const auto& [symbol, hint] : symbol_hints) key << "hint " << symbol << " " << hint << "\n";
  key << canonical_segment_text(segment);
  Sha256 sha;
  sha.update(key.str());
  return sha.hex_digest();
}

}  // namespace kiln::compiler
