// fp16 compiles and the engine cache, through compiler::compile with an in-memory EngineCache, on the L2 norm
// of each row (pow 2, sum, sqrt), whose squares and sum the precision policy keeps in fp32:
// - an engine-cache hit reports the precision notes its build reported (the layers kept in fp32 and why), and
//   the report prints the same "precision:" lines;
// - an entry written before the header kept those notes (no "precision_notes" key) still loads: a hit with
//   no notes.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/text.h"

namespace kiln::compiler {
namespace {

constexpr const char* kRowNorm = R"(graph(%x: f32[2, 16]) {
  %sq: f32[2, 16] = aten.pow.Tensor_Scalar(self=%x, exponent=2)
  %sum: f32[2, 1] = aten.sum.dim_IntList(self=%sq, dim=[-1], keepdim=True, *, dtype=None)
  %y: f32[2, 1] = aten.sqrt.default(self=%sum)
  return (%y)
})";

class MemoryEngineCache : public EngineCache {
 public:
  void save(const std::string& hash, const std::vector<uint8_t>& blob) override { entries[hash] = blob; }
  std::optional<std::vector<uint8_t>> load(const std::string& hash) override {
    auto it = entries.find(hash);
    if (it == entries.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, std::vector<uint8_t>> entries;
};

CompileReport compile_row_norm(EngineCache& cache) {
  frontend::Program program;
  program.graph = ir::parse_graph(kRowNorm);
  program.output_kinds = {frontend::OutputKind::UserOutput};
  CompilationSettings settings;
  settings.enabled_precisions = {settings::Precision::F32, settings::Precision::F16};
  settings.min_block_size = 1;
  settings.cache_built_engines = settings.reuse_cached_engines = true;
  settings.immutable_weights = false;
  CompileReport report;
  EXPECT_NE(compile(program, settings, {}, &report, &cache), nullptr);
  return report;
}

// The report's "  precision: LAYER: REASON" lines.
std::vector<std::string> precision_lines(const CompileReport& report) {
  std::vector<std::string> out;
  std::istringstream in(report.to_string());
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  precision: ", 0) == 0) out.push_back(line);
  }
  return out;
}

// `blob` (u64 header size | header JSON | plan) with `key` taken out of its header.
std::vector<uint8_t> without_header_key(const std::vector<uint8_t>& blob, const std::string& key) {
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= static_cast<uint64_t>(blob[i]) << (8 * i);
  nlohmann::json header =
      nlohmann::json::parse(blob.begin() + 8, blob.begin() + 8 + static_cast<int64_t>(size));
  EXPECT_TRUE(header.contains(key)) << header.dump();
  header.erase(key);
  const std::string text = header.dump();
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), blob.begin() + 8 + static_cast<int64_t>(size), blob.end());
  return out;
}

TEST(PrecisionCompileCache, ACacheHitReportsThePrecisionNotesOfTheBuild) {
  MemoryEngineCache cache;
  const CompileReport built = compile_row_norm(cache);
  const CompileReport hit = compile_row_norm(cache);
  ASSERT_EQ(built.engines.size(), 1u) << built.to_string();
  ASSERT_EQ(hit.engines.size(), 1u) << hit.to_string();
  EXPECT_FALSE(built.engines[0].cache_hit);
  EXPECT_TRUE(hit.engines[0].cache_hit);
  const auto& b = built.engines[0].precision;
  const auto& h = hit.engines[0].precision;
  ASSERT_GE(b.size(), 2u) << built.to_string();  // the square and the sum kept in fp32
  ASSERT_EQ(h.size(), b.size()) << hit.to_string();
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(h[i].layer, b[i].layer);
    EXPECT_EQ(h[i].reason, b[i].reason);
  }
  EXPECT_EQ(precision_lines(hit), precision_lines(built)) << hit.to_string();
}

TEST(PrecisionCompileCache, AnEntryWithoutPrecisionNotesStillLoads) {
  MemoryEngineCache cache;
  compile_row_norm(cache);
  ASSERT_EQ(cache.entries.size(), 1u);
  std::vector<uint8_t>& entry = cache.entries.begin()->second;
  entry = without_header_key(entry, "precision_notes");
  const CompileReport hit = compile_row_norm(cache);
  ASSERT_EQ(hit.engines.size(), 1u) << hit.to_string();
  EXPECT_TRUE(hit.engines[0].cache_hit) << "an entry of the old header format is a miss";
  EXPECT_TRUE(hit.engines[0].precision.empty()) << hit.to_string();
  EXPECT_TRUE(precision_lines(hit).empty()) << hit.to_string();
}

}  // namespace
}  // namespace kiln::compiler
