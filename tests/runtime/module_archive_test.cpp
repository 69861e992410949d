// The .kiln format's compatibility rule (docs/formats.md): an archive written by an older Kiln in a format
// version this one still reads loads and runs; a newer version, or one that is not a version at all, is
// refused with a one-line error that says what to do.
//
// tests/data/formats/tiny_mlp_v1.kiln is tiny_mlp compiled by Kiln at fa39532 (format version 1, plan format
// 5). The plans inside follow the plan format's own rule (older plans are rejected): when the plan format
// changes, compile the fixture again with the last Kiln that wrote .kiln version 1 plans of the current plan
// format.

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/npz.h"
#include "kiln/support/zip.h"
#include "runtime/engine_threads.h"

namespace kiln {
namespace {

const std::string kV1 = std::string(KILN_TEST_DATA_DIR) + "/formats/tiny_mlp_v1.kiln";

// `archive` with module.json edited by `edit` and, when `version` is not empty, archive_version set to it.
std::vector<uint8_t> edited(const std::vector<uint8_t>& archive,
                            const std::function<void(nlohmann::json&)>& edit,
                            const std::string& version = "") {
  ZipReader in = ZipReader::from_bytes(archive);
  ZipWriter out;
  for (const ZipEntry& e : in.entries()) {
    if (e.name == "kiln_module/archive_version" && !version.empty()) {
      out.add(e.name, version);
    } else if (e.name == "kiln_module/module.json") {
      nlohmann::json meta = nlohmann::json::parse(in.read_text(e.name));
      edit(meta);
      out.add(e.name, meta.dump());
    } else {
      out.add(e.name, in.read(e));
    }
  }
  return out.finish();
}

// The v1 fixture with archive_version and module.json's format_version set to `version`.
std::vector<uint8_t> with_version(const std::string& version) {
  return edited(
      read_file_bytes(kV1),
      [&](nlohmann::json& meta) { meta["format_version"] = std::atoi(version.c_str()); }, version);
}

std::string error_of(const std::vector<uint8_t>& archive) {
  try {
    runtime::load_from_bytes(archive, "m.kiln");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string load_error(const std::string& version) { return error_of(with_version(version)); }

TEST(ModuleArchiveFormat, Version1LoadsAndRuns) {
  std::shared_ptr<runtime::CompiledModule> module = runtime::load(kV1);
  EXPECT_TRUE(
      module->compile_settings().empty());  // version 1 archives written before the settings were saved
  auto io = read_npz(std::string(KILN_TEST_DATA_DIR) + "/tiny_mlp/io_0.npz");
  std::vector<HostTensor> out = module->execute_host({io.at("input_0")});
  const HostTensor& expected = io.at("output_0");
  ASSERT_EQ(out.at(0).sizes(), expected.sizes());
  // fp32 engine vs torch's fp32 eager: the fixture tests' tolerance (atol 1e-4 for a few matmuls).
  for (int64_t i = 0; i < expected.numel(); ++i) {
    EXPECT_NEAR(out[0].get_as_double(i), expected.get_as_double(i), 1e-4) << "element " << i;
  }
  runtime::ModuleArchiveInfo info = runtime::describe_module_archive(kV1);
  EXPECT_EQ(info.format_version, 1);
  EXPECT_EQ(info.kiln_version, "0.1.0");
  EXPECT_GT(info.plan_bytes, 0u);
  EXPECT_GT(info.constant_bytes, 0u);
}

TEST(ModuleArchiveFormat, NewerVersionIsRefusedSayingSo) {
  const std::string next = std::to_string(runtime::kModuleFormatVersion + 1);
  const std::string message = load_error(next);
  EXPECT_NE(message.find("[Unsupported]"), std::string::npos) << message;
  EXPECT_NE(message.find(".kiln format version " + next + " was written by a newer Kiln"), std::string::npos)
      << message;
  EXPECT_NE(message.find("upgrade Kiln"), std::string::npos) << message;
  EXPECT_NE(message.find("m.kiln"), std::string::npos) << message;
}

TEST(ModuleArchiveFormat, AVersionThatIsNoNumberIsRefused) {
  for (const char* bad : {"", "0", "-1", "1.5", "x", "99999999999"}) {
    const std::string message = load_error(bad);
    EXPECT_NE(message.find("not a valid .kiln archive"), std::string::npos) << bad << ": " << message;
  }
}

// The CUDA-graph settings are optional booleans: an archive without them (the v1 fixture) takes the defaults
// (static-shape engines through graphs, not the others), one with another type is refused naming the key.
TEST(ModuleArchiveFormat, CudaGraphSettingsDefaultWhenAbsentAndMustBeBooleans) {
  std::shared_ptr<runtime::CompiledModule> module = runtime::load(kV1);
  EXPECT_FALSE(module->use_cuda_graphs());
  EXPECT_TRUE(module->static_shape_cuda_graphs());
  for (const char* key : {"use_cuda_graphs", "static_shape_cuda_graphs"}) {
    for (const nlohmann::json& bad : {nlohmann::json(1), nlohmann::json("yes"), nlohmann::json(nullptr)}) {
      const std::string message =
          error_of(edited(read_file_bytes(kV1), [&](nlohmann::json& meta) { meta[key] = bad; }));
      EXPECT_NE(message.find(std::string("\"") + key + "\" must be true or false"), std::string::npos)
          << key << " = " << bad.dump() << ": " << message;
    }
    auto off = runtime::load_from_bytes(
        edited(read_file_bytes(kV1), [&](nlohmann::json& meta) { meta[key] = false; }), "m.kiln");
    EXPECT_FALSE(std::string(key) == "use_cuda_graphs" ? off->use_cuda_graphs() : off->static_shape_cuda_graphs());
  }
}

TEST(ModuleArchiveFormat, CompileSettingsRoundTrip) {
  std::shared_ptr<runtime::CompiledModule> module = runtime::load(kV1);
  module->set_compile_settings(R"({"backend":"cpu","min_block_size":5})");
  std::shared_ptr<runtime::CompiledModule> again = runtime::load_from_bytes(runtime::save_to_bytes(*module));
  EXPECT_EQ(nlohmann::json::parse(again->compile_settings()),
            nlohmann::json::parse(module->compile_settings()));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(ModuleArchiveFormat, EngineWeightsAreStoredOnce) {
  const std::vector<uint8_t> v1 = read_file_bytes(kV1);
  std::shared_ptr<runtime::CompiledModule> old_module = runtime::load(kV1);
  const std::vector<uint8_t> current = runtime::save_to_bytes(*old_module);
  // Every constant of the engine segment (tiny_mlp: the linear layers' weights and biases) names its plan
  // weight.
  nlohmann::json meta =
      nlohmann::json::parse(ZipReader::from_bytes(current).read_text("kiln_module/module.json"));
  EXPECT_EQ(meta["format_version"], runtime::kModuleFormatVersion);
  size_t in_plan = 0, weight_bytes = 0;
  for (const nlohmann::json& c : meta["constants"]) {
    if (c["graph"] == "") continue;
    EXPECT_TRUE(c.contains("plan_weight") && !c.contains("entry")) << c.dump();
    ++in_plan;
  }
  EXPECT_GT(in_plan, 0u);
  for (const runtime::EngineSegment& e : old_module->engines()) {
    for (const engine::PlanLayerInfo& layer : e.plan->layers()) weight_bytes += layer.weight_bytes;
  }
  // The file shrinks by the weights' bytes (give or take the zip's entry headers and alignment).
  EXPECT_LT(current.size() + weight_bytes * 9 / 10, v1.size()) << current.size() << " vs " << v1.size();
  // It loads with the constants sharing the plans' bytes, and runs bit-identically to the version 1 module.
  std::shared_ptr<runtime::CompiledModule> loaded = runtime::load_from_bytes(current);
  for (const runtime::EngineSegment& e : loaded->engines()) {
    const ir::Node* node = loaded->graph().find_node(e.node);
    ASSERT_NE(node, nullptr);
    for (const ir::Value* c : node->subgraph()->constants()) {
      const HostTensor weight = e.plan->weight(c->fqn().empty() ? c->name() : c->fqn());
      if (weight.defined()) {
        EXPECT_EQ(weight.data(), c->data().data()) << c->name();
      }
    }
  }
  auto io = read_npz(std::string(KILN_TEST_DATA_DIR) + "/tiny_mlp/io_0.npz");
  const std::vector<HostTensor> a = old_module->execute_host({io.at("input_0")});
  const std::vector<HostTensor> b = loaded->execute_host({io.at("input_0")});
  ASSERT_EQ(a.at(0).nbytes(), b.at(0).nbytes());
  EXPECT_EQ(0, std::memcmp(a[0].data(), b[0].data(), a[0].nbytes()));
}

TEST(ModuleArchiveFormat, BadPlanWeightReferencesAreErrors) {
  const std::vector<uint8_t> current = runtime::save_to_bytes(*runtime::load(kV1));
  auto first_plan_weight = [](nlohmann::json& meta) -> nlohmann::json& {
    for (nlohmann::json& c : meta["constants"]) {
      if (c.contains("plan_weight")) return c;
    }
    throw std::runtime_error("no plan_weight entry");
  };
  const std::string missing = error_of(
      edited(current, [&](nlohmann::json& meta) { first_plan_weight(meta)["plan_weight"] = "nosuch"; }));
  EXPECT_NE(missing.find("names weight 'nosuch', which engine"), std::string::npos) << missing;
  const std::string old_format = error_of(edited(
      current, [&](nlohmann::json& meta) { meta["format_version"] = 1; }, "1"));
  EXPECT_NE(old_format.find("\"plan_weight\" needs format 2"), std::string::npos) << old_format;
  const std::string top_level = error_of(edited(current, [&](nlohmann::json& meta) {
    nlohmann::json& c = first_plan_weight(meta);
    c["graph"] = "";
  }));
  EXPECT_NE(top_level.find("not a valid .kiln archive"), std::string::npos) << top_level;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The compile settings' threads size the CPU engines' pools when the archive loads (their device strings end
// in "<N>t"); absent, all cores; anything but an integer in [0, 1024] is refused naming it.
TEST(ModuleArchiveFormat, SettingsThreadsSizeTheEnginesWhenLoaded) {
  auto with_threads = [](const nlohmann::json& threads) {
    return edited(read_file_bytes(kV1), [&](nlohmann::json& meta) { meta["settings"] = {{"threads", threads}}; });
  };
  EXPECT_EQ(kiln::testing::first_engine_threads(*runtime::load_from_bytes(with_threads(1), "m.kiln")),
            "1t");
  EXPECT_EQ(kiln::testing::first_engine_threads(*runtime::load_from_bytes(with_threads(3), "m.kiln")),
            "3t");
  const std::string all = std::to_string(std::max(1u, std::thread::hardware_concurrency())) + "t";
  EXPECT_EQ(kiln::testing::first_engine_threads(*runtime::load(kV1)), all);
  EXPECT_EQ(kiln::testing::first_engine_threads(*runtime::load_from_bytes(with_threads(0), "m.kiln")),
            all);
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(1025), nlohmann::json("2"),
                                    nlohmann::json(1.5), nlohmann::json(nullptr), nlohmann::json(1ULL << 63)}) {
    const std::string message = error_of(with_threads(bad));
    EXPECT_NE(message.find("settings \"threads\" must be an integer in [0, 1024]"), std::string::npos)
        << bad.dump() << ": " << message;
  }
}

}  // namespace
}  // namespace kiln
