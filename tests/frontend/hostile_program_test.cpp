// Hostile edits of a fixture's models/model.json that crashed or silently misled the loader before: JSON nested
// beyond the documented limit (docs/limits.md) in a node's metadata (SIGSEGV in recursive re-serialization).
// Each must be a one-line kiln::Error(InvalidInput) naming the file and what is wrong.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "frontend/archive_edit.h"
#include "kiln/frontend/program.h"
#include "kiln/support/error.h"
#include "kiln/support/json_limits.h"

namespace kiln::frontend {
namespace {

using testing::ArchiveEntries;
using testing::fixture_path;

/// The fixture's archive with model.json edited by `edit` (on the parsed document) and, after serialization,
/// every occurrence of the JSON string "@@RAW@@" replaced by `raw` (for text no JSON library would write).
std::vector<uint8_t> edited(const std::string& fixture, const std::function<void(nlohmann::json&)>& edit,
                            const std::string& raw = "") {
  ArchiveEntries archive = ArchiveEntries::read(fixture_path(fixture));
  nlohmann::json doc = nlohmann::json::parse(archive.text("models/model.json"));
  edit(doc);
  std::string text = doc.dump();
  for (size_t at; (at = text.find("\"@@RAW@@\"")) != std::string::npos;) text.replace(at, 9, raw);
  archive.set_text("models/model.json", text);
  return archive.zip();
}

/// Expects loading `bytes` to fail with InvalidInput mentioning `needle`.
void expect_rejected(const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    load_program_from_bytes(bytes, "hostile.pt2");
    FAIL() << "loaded; expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("hostile.pt2"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(HostileProgram, DeeplyNestedMetadataIsRejected) {
  auto bytes = edited(
      "tiny_mlp", [](nlohmann::json& doc) { doc["graph_module"]["graph"]["nodes"][0]["metadata"]["x"] = "@@RAW@@"; },
      std::string(200000, '[') + std::string(200000, ']'));
  expect_rejected(bytes, "deeper than 512 levels");
}

TEST(HostileProgram, NestedMetadataWithinTheLimitLoads) {
  const size_t depth = kMaxJsonDepth - 10;  // the document's own levels come on top
  auto bytes = edited(
      "tiny_mlp", [](nlohmann::json& doc) { doc["graph_module"]["graph"]["nodes"][0]["metadata"]["x"] = "@@RAW@@"; },
      std::string(depth, '[') + std::string(depth, ']'));
  Program p = load_program_from_bytes(bytes, "nested.pt2");
  EXPECT_GT(p.graph->num_nodes(), 0u);
}

}  // namespace
}  // namespace kiln::frontend

namespace kiln::frontend {
namespace {

// torch.export's ScalarType code of int32 (schema.py: INT = 4).
constexpr int kInt32Code = 4;

// An intermediate's or output's dtype edited in model.json: compiled modules silently cast to the declared type
// before (int32 garbage for an output declared int32). Load now rejects it, naming node and value.
// CI's pt2 fuzzer: an argument name with '}' loaded, and the graph's IR text (graph.kir in a .kiln) then did not
// parse back. Argument names are identifiers, as in every op schema.
TEST(HostileProgram, ArgumentNameThatIsNotAnIdentifierIsRejected) {
  for (const std::string bad : {"approximat}e", "a b", "x=1", "1st", "a.b"}) {
    SCOPED_TRACE(bad);
    auto bytes = edited("tiny_mlp", [&](nlohmann::json& doc) {
      doc["graph_module"]["graph"]["nodes"][0]["inputs"][0]["name"] = bad;
    });
    expect_rejected(bytes, "is not an identifier");
  }
}

// CI's pt2 fuzzer again: a tensor's device type "c`u" loaded and printed as "@c`u", which the IR text does not
// read back; a device index over 6 digits did the same. Devices are read once (ir::Device::make).
TEST(HostileProgram, DeviceThatDoesNotPrintBackIsRejected) {
  const std::pair<nlohmann::json, std::string> cases[] = {
      {{{"type", "c`u"}, {"index", nullptr}}, "malformed device type"},
      {{{"type", "Cuda"}, {"index", 0}}, "malformed device type"},
      {{{"type", "cuda"}, {"index", 1234567}}, "out of range"},
      {{{"type", "cuda"}, {"index", -2}}, "out of range"},
  };
  for (const auto& c : cases) {
    const nlohmann::json& device = c.first;  // (clang 14 cannot capture a structured binding)
    SCOPED_TRACE(device.dump());
    auto bytes = edited("tiny_mlp", [&](nlohmann::json& doc) {
      auto& values = doc["graph_module"]["graph"]["tensor_values"];
      values.begin().value()["device"] = device;
    });
    expect_rejected(bytes, c.second);
  }
}

// The same class: a range constraint's symbol name is printed bare in the IR text ("symbol s77 in [2, 64]").
TEST(HostileProgram, RangeConstraintSymbolThatIsNotAnIdentifierIsRejected) {
  auto bytes = edited("tiny_mlp", [](nlohmann::json& doc) {
    doc["range_constraints"]["s 77"] = {{"min_val", 2}, {"max_val", 64}};
  });
  expect_rejected(bytes, "symbol name 's 77' is not an identifier");
}

TEST(HostileProgram, DeclaredDtypeOfAnIntermediateDisagreesWithItsOp) {
  auto bytes = edited("tiny_mlp", [](nlohmann::json& doc) {
    doc["graph_module"]["graph"]["tensor_values"]["gelu"]["dtype"] = kInt32Code;
  });
  expect_rejected(bytes, "node 'gelu' (aten.gelu.default): output 'gelu' is declared i32 but the op computes f32");
}

TEST(HostileProgram, DeclaredDtypeOfAnOutputDisagreesWithItsOp) {
  auto bytes = edited("tiny_mlp", [](nlohmann::json& doc) {
    doc["graph_module"]["graph"]["tensor_values"]["linear_2"]["dtype"] = kInt32Code;
  });
  expect_rejected(bytes, "output 'linear_2' is declared i32 but the op computes f32");
}

TEST(HostileProgram, EveryFixtureAgreesWithTheDtypeRules) {
  for (const char* fixture : {"tiny_convnet", "tiny_encoder", "tiny_mlp", "tiny_resnet"}) {
    EXPECT_NO_THROW(load_program(fixture_path(fixture))) << fixture;
  }
  EXPECT_NO_THROW(load_program(fixture_path("tiny_resnet", "model_core_aten.pt2")));
  EXPECT_NO_THROW(load_program(fixture_path("tiny_convnet", "model_core_aten.pt2")));
}

}  // namespace
}  // namespace kiln::frontend
