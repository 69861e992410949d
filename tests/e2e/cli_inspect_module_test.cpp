// kiln inspect on a compiled module (.kiln): the documented JSON (docs/cli.md) and the text form, in a
// process of their own as a user runs them.

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_util.h"
#include "kiln/runtime/module_archive.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

// tiny_convnet compiled once: an engine segment and a PyTorch run (lgamma forced to PyTorch).
const std::string& convnet_module() {
  static const std::string path = [] {
    fs::path dir = fs::temp_directory_path() / ("kiln_cli_inspect_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string out = (dir / "convnet.kiln").string();
    Result c = kiln("compile " + data("tiny_convnet/model.pt2") + " -o " + out +
                    " --no-cache --torch-executed-ops aten.lgamma.default");
    EXPECT_EQ(c.code, 0) << c.err;
    return out;
  }();
  return path;
}

TEST(CliInspectModule, JsonHasTheDocumentedFields) {
  Result r = kiln("inspect " + convnet_module() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format_version"], runtime::kModuleFormatVersion);
  EXPECT_FALSE(j["kiln_version"].get<std::string>().empty());
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_GT(j["bytes"]["file"].get<uint64_t>(), j["bytes"]["plans"].get<uint64_t>());
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["dtype"], "f32");
  EXPECT_EQ(j["outputs"].size(), 2u);  // log_softmax and lgamma
  // The settings it was compiled with, by field name.
  EXPECT_EQ(j["settings"]["backend"], "cpu");
  EXPECT_EQ(j["settings"]["min_block_size"], 5);
  EXPECT_EQ(j["settings"]["torch_executed_ops"], nlohmann::json::parse(R"(["aten.lgamma.default"])"));
  bool engine = false, torch = false;
  for (const nlohmann::json& s : j["segments"]) {
    engine |= s["kind"] == "engine";
    if (s["kind"] == "torch") {
      torch = true;
      EXPECT_TRUE(s["ops"].contains("aten.lgamma.default")) << s.dump();
    }
    EXPECT_GT(s["nodes"].get<int>(), 0);
  }
  EXPECT_TRUE(engine && torch) << j["segments"].dump();
  ASSERT_FALSE(j["engines"].empty());
  for (const nlohmann::json& e : j["engines"]) {
    EXPECT_EQ(e["backend"], "cpu");
    EXPECT_FALSE(e["device"].get<std::string>().empty());
    EXPECT_GT(e["plan_bytes"].get<uint64_t>(), 0u);
    EXPECT_TRUE(e["workspace_bytes"].is_number_unsigned());
    ASSERT_FALSE(e["profiles"].empty());
    EXPECT_TRUE(e["profiles"][0]["inputs"].is_object());
    EXPECT_GT(e["profiles"][0]["arena_bytes"].get<uint64_t>(), 0u);
    EXPECT_TRUE(e["precisions"].contains("f32")) << e["precisions"].dump();
    EXPECT_FALSE(e["tactics"].empty());
    uint64_t weights = 0;
    for (const nlohmann::json& l : e["layers"]) {
      for (const char* key : {"name", "kind", "tactic", "precision", "compute", "inputs", "outputs", "input_formats",
                              "output_formats", "weight_bytes", "detail"}) {
        EXPECT_TRUE(l.contains(key)) << key << " in " << l.dump();
      }
      EXPECT_EQ(l["precision"].size(), l["outputs"].size());
      if (!l["precision"].empty()) EXPECT_EQ(l["compute"], l["precision"][0]) << "an fp32 build quantizes nothing";
      EXPECT_EQ(l["output_formats"].size(), l["outputs"].size());
      weights += l["weight_bytes"].get<uint64_t>();
    }
    EXPECT_EQ(e["weight_bytes"], weights);
    EXPECT_GT(weights, 0u);  // the convolutions' weights
  }
}

TEST(CliInspectModule, TextListsSegmentsEnginesAndLayers) {
  Result r = kiln("inspect " + convnet_module() + " --layers");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* text : {"backend: cpu", "settings: {", "segments:", "  engine ", "  torch ",
                           "precisions: f32", "tactics: ", "profile 0: arena ", "convolution"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " in\n" << r.out;
  }
  Result graph = kiln("inspect " + convnet_module() + " --graph");
  ASSERT_EQ(graph.code, 0) << graph.err;
  EXPECT_NE(graph.out.find("kiln.engine_segment.default"), std::string::npos);
}

TEST(CliInspectModule, AnOlderFormatShowsNoSettings) {
  Result r = kiln("inspect " + data("formats/tiny_mlp_v1.kiln") + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format_version"], 1);
  EXPECT_TRUE(j["settings"].is_null());
  EXPECT_EQ(j["engines"].size(), 1u);
}

TEST(CliInspectModule, PreCompileFlagsAreRefusedForAModule) {
  Result r = kiln("inspect " + convnet_module() + " --coverage");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is a compiled module"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kiln
