// The malformed-input suite: every fixture truncated, with bytes flipped and JSON fields mutated, entries
// deleted, weight files shortened, and a set of hand-made bad archives. Every case must either load (and then
// verify) or throw kiln::Error of kind InvalidInput, Unsupported or Io; anything else (another exception, an
// Internal error, a crash or a sanitizer report) fails. The number of cases is bounded so that the suite
// stays well under a minute under ASan+UBSan on two cores.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <unistd.h>

#include "frontend/archive_edit.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"

namespace kiln::frontend {
namespace {

using testing::ArchiveEntries;
using testing::fixture_path;

// Case counts per fixture archive (there are six archives).
constexpr int kJsonMutations = 60;      // structured mutations of models/model.json
constexpr int kConfigMutations = 20;    // structured mutations of the weights config
constexpr int kTextFlips = 25;          // byte flips in model.json text
constexpr int kConfigTextFlips = 10;    // byte flips in the weights config text
constexpr int kRawFlips = 25;           // byte flips in the archive itself
constexpr size_t kMaxTruncations = 700; // truncation offsets (every 97 bytes, thinned for big archives)

const std::vector<std::pair<std::string, std::string>> kFixtures = {
    {"tiny_convnet", "model.pt2"}, {"tiny_convnet", "model_core_aten.pt2"}, {"tiny_encoder", "model.pt2"},
    {"tiny_mlp", "model.pt2"},     {"tiny_resnet", "model.pt2"},            {"tiny_resnet", "model_core_aten.pt2"}};

struct Outcome {
  int loaded = 0;
  int rejected = 0;
};

// Loads `bytes`; returns normally when it loads (and verifies) or throws a non-internal kiln::Error. Records a
// test failure with the case description otherwise.
void expect_clean(const std::vector<uint8_t>& bytes, const std::string& what, Outcome& outcome,
                  std::optional<ErrorKind> required = std::nullopt, const char* message_part = nullptr) {
  try {
    Program p = load_program_from_bytes(bytes, what);
    ir::verify(*p.graph);
    outcome.loaded++;
    if (std::getenv("KILN_MALFORMED_VERBOSE")) std::printf("%s -> loaded\n", what.c_str());
    if (required) ADD_FAILURE() << what << ": loaded, expected an error";
  } catch (const Error& e) {
    outcome.rejected++;
    // KILN_MALFORMED_VERBOSE=1 prints every rejection, to review the messages.
    if (std::getenv("KILN_MALFORMED_VERBOSE")) std::printf("%s -> %s\n", what.c_str(), e.what());
    if (e.kind() == ErrorKind::Internal) ADD_FAILURE() << what << ": internal error: " << e.what();
    if (required && e.kind() != *required) ADD_FAILURE() << what << ": wrong error kind: " << e.what();
    if (message_part && std::string(e.what()).find(message_part) == std::string::npos) {
      ADD_FAILURE() << what << ": message lacks '" << message_part << "': " << e.what();
    }
    // Errors are one line and name the archive.
    std::string text = e.what();
    if (text.find('\n') != std::string::npos) ADD_FAILURE() << what << ": multi-line error: " << text;
    if (text.find(what) == std::string::npos) ADD_FAILURE() << what << ": error does not name the file: " << text;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": non-kiln exception: " << e.what();
  } catch (...) {
    ADD_FAILURE() << what << ": unknown exception";
  }
}

// Every JSON pointer in `doc` (objects' members and arrays' elements), depth first.
void collect_pointers(const nlohmann::json& doc, const nlohmann::json::json_pointer& at,
                      std::vector<nlohmann::json::json_pointer>& out) {
  out.push_back(at);
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it) collect_pointers(it.value(), at / it.key(), out);
  } else if (doc.is_array()) {
    for (size_t i = 0; i < doc.size(); ++i) collect_pointers(doc[i], at / i, out);
  }
}

// Applies one random mutation at a random place of the document; returns a description.
std::string mutate_json(nlohmann::json& doc, std::mt19937& rng, const std::vector<std::string>& strings) {
  std::vector<nlohmann::json::json_pointer> pointers;
  collect_pointers(doc, nlohmann::json::json_pointer(), pointers);
  // Skip the root, and mostly skip free-text metadata values (they cannot break anything).
  nlohmann::json::json_pointer at;
  for (int tries = 0; tries < 8; ++tries) {
    at = pointers[1 + rng() % (pointers.size() - 1)];
    if (at.to_string().find("/metadata/") == std::string::npos) break;
  }
  nlohmann::json& target = doc[at];
  const int kind = static_cast<int>(rng() % 11);
  switch (kind) {
    case 0: {  // delete it
      nlohmann::json& parent = doc[at.parent_pointer()];
      if (parent.is_object()) parent.erase(at.back());
      else parent.erase(static_cast<size_t>(std::stoul(at.back())));
      return "delete " + at.to_string();
    }
    case 1: target = nullptr; return "null at " + at.to_string();
    case 2: target = "x"; return "string at " + at.to_string();
    case 3: target = -1; return "-1 at " + at.to_string();
    case 4: target = rng() % 2 ? nlohmann::json(int64_t{9223372036854775807}) : nlohmann::json(1e300);
            return "huge number at " + at.to_string();
    case 5: target = nlohmann::json::object(); return "{} at " + at.to_string();
    case 6: target = nlohmann::json::array(); return "[] at " + at.to_string();
    case 7: target = true; return "true at " + at.to_string();
    case 8:  // another name from the document: dangling or wrong-kind references
      target = strings[rng() % strings.size()];
      return "other string at " + at.to_string();
    case 9:
      if (target.is_number_integer()) {
        int64_t v = target.get<int64_t>();
        target = rng() % 2 ? v + 1 : (v == 0 ? int64_t{1} << 40 : -v);
        return "changed integer at " + at.to_string();
      }
      target = 0;
      return "0 at " + at.to_string();
    default: {  // swap in a copy of another value of the document (a structurally plausible but wrong value)
      nlohmann::json other = doc[pointers[1 + rng() % (pointers.size() - 1)]];
      doc[at] = other;
      return "copy at " + at.to_string();
    }
  }
}

std::vector<std::string> all_strings(const nlohmann::json& doc) {
  std::vector<std::string> out;
  std::vector<const nlohmann::json*> stack{&doc};
  while (!stack.empty()) {
    const nlohmann::json* j = stack.back();
    stack.pop_back();
    if (j->is_string() && j->get_ref<const std::string&>().size() < 64) out.push_back(j->get<std::string>());
    if (j->is_structured()) {
      for (const auto& e : *j) stack.push_back(&e);
    }
  }
  if (out.empty()) out.push_back("x");
  return out;
}

std::string label(const std::pair<std::string, std::string>& f, const std::string& what) {
  return f.first + "/" + f.second + "[" + what + "]";
}

class MalformedTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(MalformedTest, Truncations) {
  const auto& f = GetParam();
  const std::vector<uint8_t> bytes = read_file_bytes(fixture_path(f.first, f.second));
  std::vector<size_t> offsets;
  const size_t stride = std::max<size_t>(97, bytes.size() / kMaxTruncations);
  for (size_t n = 0; n < bytes.size(); n += stride) offsets.push_back(n);
  for (size_t n = bytes.size() > 200 ? bytes.size() - 200 : 0; n < bytes.size(); ++n) offsets.push_back(n);
  Outcome outcome;
  for (size_t n : offsets) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    expect_clean(cut, label(f, "truncated at " + std::to_string(n)), outcome);
  }
  // A truncated archive has lost its central directory: nothing may load.
  EXPECT_EQ(outcome.loaded, 0);
}

TEST_P(MalformedTest, RawByteFlips) {
  const auto& f = GetParam();
  const std::vector<uint8_t> bytes = read_file_bytes(fixture_path(f.first, f.second));
  std::mt19937 rng(1234);
  Outcome outcome;
  for (int i = 0; i < kRawFlips; ++i) {
    std::vector<uint8_t> flipped = bytes;
    // Half the flips land in the last 2 KiB (central directory and end record), where they matter most.
    size_t pos = i % 2 ? rng() % flipped.size() : flipped.size() - 1 - rng() % std::min<size_t>(2048, flipped.size());
    flipped[pos] ^= static_cast<uint8_t>(1 + rng() % 255);
    expect_clean(flipped, label(f, "raw flip at " + std::to_string(pos)), outcome);
  }
}

TEST_P(MalformedTest, JsonTextFlips) {
  const auto& f = GetParam();
  ArchiveEntries original = ArchiveEntries::read(fixture_path(f.first, f.second));
  std::mt19937 rng(99);
  Outcome outcome;
  for (const auto& [entry, count] : {std::pair<std::string, int>{"models/model.json", kTextFlips},
                                     {"_weights_config.json", kConfigTextFlips}}) {
    const std::string& suffix = entry;
    const std::string text = original.text(suffix);
    ASSERT_FALSE(text.empty()) << suffix;
    // Structural characters and digits are where a flip changes meaning; aim half the flips at them.
    std::vector<size_t> interesting;
    for (size_t i = 0; i < text.size(); ++i) {
      if (std::string_view("{}[]:,\"0123456789").find(text[i]) != std::string_view::npos) interesting.push_back(i);
    }
    for (int i = 0; i < count; ++i) {
      ArchiveEntries a = original;
      std::string t = text;
      size_t pos = i % 2 && !interesting.empty() ? interesting[rng() % interesting.size()] : rng() % t.size();
      static const char kReplacements[] = "0123456789{}[]:,\"\\ -.eE\x01\xff";
      t[pos] = kReplacements[rng() % (sizeof(kReplacements) - 1)];
      a.set_text(suffix, t);
      expect_clean(a.zip(), label(f, suffix + " flip at " + std::to_string(pos)), outcome);
    }
  }
}

TEST_P(MalformedTest, JsonMutations) {
  const auto& f = GetParam();
  ArchiveEntries original = ArchiveEntries::read(fixture_path(f.first, f.second));
  // Both forms name their model "model" (the folder differs: "model/" or "model_core_aten/").
  const std::string model_entry = "models/model.json";
  const std::string config_entry = "model_weights_config.json";
  std::mt19937 rng(7);
  Outcome outcome;
  for (const auto& [entry, count] :
       {std::pair<std::string, int>{model_entry, kJsonMutations}, {config_entry, kConfigMutations}}) {
    const nlohmann::json doc = nlohmann::json::parse(original.text(entry));
    const std::vector<std::string> strings = all_strings(doc);
    for (int i = 0; i < count; ++i) {
      nlohmann::json mutated = doc;
      std::string what = mutate_json(mutated, rng, strings);
      ArchiveEntries a = original;
      a.set_text(entry, mutated.dump());
      expect_clean(a.zip(), label(f, entry + ": " + what), outcome);
    }
  }
  // Some mutations are harmless (a changed stack trace); most are not. Both outcomes must occur.
  EXPECT_GT(outcome.rejected, 0);
}

TEST_P(MalformedTest, DeletedEntries) {
  const auto& f = GetParam();
  ArchiveEntries original = ArchiveEntries::read(fixture_path(f.first, f.second));
  Outcome outcome;
  for (size_t i = 0; i < original.entries.size(); ++i) {
    ArchiveEntries a = original;
    const std::string name = a.entries[i].first;
    a.entries.erase(a.entries.begin() + static_cast<std::ptrdiff_t>(i));
    const bool needed = name.find("/models/") != std::string::npos || name.find("/weights/") != std::string::npos;
    // The model, the weights config and every weight file are needed; the others are optional.
    expect_clean(a.zip(), label(f, "without " + name), outcome,
                 needed ? std::optional<ErrorKind>(ErrorKind::InvalidInput) : std::nullopt);
  }
}

TEST_P(MalformedTest, ShortWeightFile) {
  const auto& f = GetParam();
  ArchiveEntries a = ArchiveEntries::read(fixture_path(f.first, f.second));
  std::vector<uint8_t>* w = a.find("data/weights/weight_0");
  ASSERT_NE(w, nullptr);
  w->resize(w->size() / 2);
  Outcome outcome;
  expect_clean(a.zip(), label(f, "short weight_0"), outcome, ErrorKind::InvalidInput, "shorter than its metadata");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MalformedTest, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) {
                           std::string name = info.param.first + "_" + info.param.second;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// --- Hand-made cases, each with the error it must give -------------------------------------------------------

class MalformedCaseTest : public ::testing::Test {
 protected:
  void SetUp() override { base = ArchiveEntries::read(fixture_path("tiny_convnet")); }
  nlohmann::json model() { return nlohmann::json::parse(base.text("models/model.json")); }
  /// A copy of the fixture with models/model.json replaced by `m`.
  ArchiveEntries with_model(const nlohmann::json& m) {
    ArchiveEntries a = base;
    a.set_text("models/model.json", m.dump());
    return a;
  }
  void expect(const ArchiveEntries& a, ErrorKind kind, const char* message_part, const std::string& what) {
    Outcome outcome;
    expect_clean(a.zip(), what, outcome, kind, message_part);
  }
  ArchiveEntries base;
};

TEST_F(MalformedCaseTest, SchemaMajor7) {
  nlohmann::json m = model();
  m["schema_version"]["major"] = 7;
  expect(with_model(m), ErrorKind::Unsupported, "major version 7", "schema7.pt2");
}

TEST_F(MalformedCaseTest, UnknownDtypeCode) {
  nlohmann::json m = model();
  m["graph_module"]["graph"]["tensor_values"]["x"]["dtype"] = 99;
  expect(with_model(m), ErrorKind::InvalidInput, "tensor_values.x.dtype", "dtype99.pt2");

  ArchiveEntries b = ArchiveEntries::read(fixture_path("tiny_convnet"));
  auto c = nlohmann::json::parse(b.text("model_weights_config.json"));
  c["config"]["conv.bias"]["tensor_meta"]["dtype"] = 77;
  b.set_text("model_weights_config.json", c.dump());
  expect(b, ErrorKind::InvalidInput, "dtype", "config_dtype77.pt2");
}

TEST_F(MalformedCaseTest, SparseLayoutIsUnsupported) {
  nlohmann::json m = model();
  m["graph_module"]["graph"]["tensor_values"]["x"]["layout"] = 1;
  expect(with_model(m), ErrorKind::Unsupported, "layout", "sparse.pt2");
}

TEST_F(MalformedCaseTest, DanglingValueName) {
  nlohmann::json m = model();
  auto& nodes = m["graph_module"]["graph"]["nodes"];
  nodes[2]["inputs"][0]["arg"]["as_tensor"]["name"] = "no_such_value";
  expect(with_model(m), ErrorKind::InvalidInput, "no_such_value", "dangling.pt2");
  // The error names the node too.
  try {
    load_program_from_bytes(base.zip(), "dangling.pt2");
  } catch (const Error& e) {
    EXPECT_EQ(e.context().node, "relu") << e.what();
  }
}

TEST_F(MalformedCaseTest, UseBeforeDefinition) {
  nlohmann::json m = model();
  auto& nodes = m["graph_module"]["graph"]["nodes"];
  std::swap(nodes[0], nodes[1]);  // batch_norm now reads conv2d before conv2d exists
  expect(with_model(m), ErrorKind::InvalidInput, "conv2d", "order.pt2");
}

TEST_F(MalformedCaseTest, MalformedNestedGraphsAndUnknownArgumentKinds) {
  // Nested graphs load (synthetic_test.cpp); a malformed one is an error naming its path.
  nlohmann::json m = model();
  m["graph_module"]["graph"]["nodes"][2]["inputs"][0]["arg"] = {{"as_graph", {{"name", "g"}, {"graph", {}}}}};
  expect(with_model(m), ErrorKind::InvalidInput, "as_graph.graph: expected an object", "as_graph.pt2");

  m = model();
  m["graph_module"]["graph"]["nodes"][2]["inputs"][0]["arg"] = {{"as_wibble", 1}};
  expect(with_model(m), ErrorKind::InvalidInput, "as_wibble", "as_wibble.pt2");
}

TEST_F(MalformedCaseTest, MissingFieldNamesThePath) {
  nlohmann::json m = model();
  m["graph_module"]["graph"]["nodes"][3].erase("target");
  expect(with_model(m), ErrorKind::InvalidInput, "graph_module.graph.nodes[3]: missing field 'target'", "notarget.pt2");

  m = model();
  m["graph_module"]["graph"]["nodes"][3]["inputs"] = "oops";
  expect(with_model(m), ErrorKind::InvalidInput, "graph_module.graph.nodes[3].inputs: expected an array", "inputs.pt2");
}

TEST_F(MalformedCaseTest, PickledWeightIsUnsupported) {
  auto c = nlohmann::json::parse(base.text("model_weights_config.json"));
  c["config"]["fc.bias"]["use_pickle"] = true;
  base.set_text("model_weights_config.json", c.dump());
  expect(base, ErrorKind::Unsupported, "pickled", "pickle.pt2");
}

TEST_F(MalformedCaseTest, MissingWeight) {
  auto c = nlohmann::json::parse(base.text("model_weights_config.json"));
  c["config"].erase("bn.running_mean");
  base.set_text("model_weights_config.json", c.dump());
  expect(base, ErrorKind::InvalidInput, "bn.running_mean", "noweight.pt2");
}

TEST_F(MalformedCaseTest, CustomObjectInputIsUnsupported) {
  nlohmann::json m = model();
  m["graph_module"]["signature"]["input_specs"][0] = {
      {"custom_obj", {{"arg", {{"name", "obj"}, {"class_fqn", "foo.Bar"}}}, {"custom_obj_name", "obj"}}}};
  expect(with_model(m), ErrorKind::Unsupported, "custom_obj", "custom.pt2");
}

TEST_F(MalformedCaseTest, ArchiveLayouts) {
  // Not a zip at all, and an empty file (through a real path).
  Outcome outcome;
  std::vector<uint8_t> text(1000);
  std::mt19937 rng(5);
  for (auto& b : text) b = static_cast<uint8_t>(rng());
  expect_clean(text, "random.pt2", outcome, ErrorKind::InvalidInput);
  expect_clean({}, "empty.pt2", outcome, ErrorKind::InvalidInput);
  const std::string empty_path = ::testing::TempDir() + "/kiln_empty_" + std::to_string(getpid()) + ".pt2";
  write_file_atomic(empty_path, std::vector<uint8_t>{});
  try {
    load_program(empty_path);
    ADD_FAILURE() << "an empty file loaded";
  } catch (const Error& e) {
    EXPECT_NE(e.kind(), ErrorKind::Internal);
    EXPECT_NE(std::string(e.what()).find(empty_path), std::string::npos) << e.what();
  }
  std::remove(empty_path.c_str());

  // The pre-2.8 layout.
  ArchiveEntries old;
  old.entries.push_back({"archive/serialized_exported_program.json", {'{', '}'}});
  old.entries.push_back({"archive/serialized_state_dict.pt", {'x'}});
  expect_clean(old.zip(), "old.pt2", outcome, ErrorKind::Unsupported, "unsupported archive layout");

  // No models/*.json.
  ArchiveEntries no_model = base;
  std::erase_if(no_model.entries, [](const auto& e) { return e.first.find("/models/") != std::string::npos; });
  expect_clean(no_model.zip(), "nomodel.pt2", outcome, ErrorKind::InvalidInput, "models/*.json");

  // Entries outside one top-level folder.
  ArchiveEntries stray = base;
  stray.entries.push_back({"other/file", {'x'}});
  expect_clean(stray.zip(), "stray.pt2", outcome, ErrorKind::InvalidInput, "top-level folder");

  // A different archive_format.
  ArchiveEntries format = base;
  format.set_text("archive_format", "torchscript");
  expect_clean(format.zip(), "format.pt2", outcome, ErrorKind::InvalidInput, "archive_format");

  // Several models, one of them "model": that one is loaded. Several without "model": an error.
  ArchiveEntries several = base;
  several.entries.push_back({"model/models/other.json", {'{', '}'}});
  expect_clean(several.zip(), "several.pt2", outcome);
  EXPECT_EQ(outcome.rejected, 6);
  for (auto& [name, data] : several.entries) {
    if (name == "model/models/model.json") name = "model/models/first.json";
  }
  expect_clean(several.zip(), "several_unnamed.pt2", outcome, ErrorKind::InvalidInput, "several models");

  // A folder name other than "model/" works.
  ArchiveEntries renamed = base;
  for (auto& [name, data] : renamed.entries) name = "my_export" + name.substr(name.find('/'));
  Program p = load_program_from_bytes(renamed.zip(), "renamed.pt2");
  EXPECT_EQ(p.graph->num_nodes(), 7u);
}

}  // namespace
}  // namespace kiln::frontend
