// Hostile programs through the whole compiler (edited copies of the fixtures' model.json): training-mode
// batch norm (compiled as inference batch norm before: max abs 1.99 vs torch), zero-size batches (SIGFPE in
// oneDNN's matmul primitive creation), a size expression with an INT64_MIN exponent (endless recursion), and
// symbol ranges up to 2^28 and 2^36 (a 137 GB arena at run time; an unloadable .kiln). Each compiles to a
// module that agrees with torch (run_in_libtorch, the libtorch executor) and survives a save/load round trip,
// or fails with a clear kiln::Error.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/compile_test_util.h"
#include "frontend/archive_edit.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/libtorch_node_executor.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"

namespace kiln::compiler {
namespace {

using frontend::testing::ArchiveEntries;
using testing_util::closeness;
using testing_util::fixture;
using testing_util::io_inputs;
using testing_util::random_floats;

frontend::Program edited_program(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  ArchiveEntries archive = ArchiveEntries::read(fixture(name));
  nlohmann::json doc = nlohmann::json::parse(archive.text("models/model.json"));
  edit(doc);
  archive.set_text("models/model.json", doc.dump());
  return frontend::load_program_from_bytes(archive.zip(), name + "_edited.pt2");
}

nlohmann::json& graph_of(nlohmann::json& doc) { return doc["graph_module"]["graph"]; }

// Every size/stride given as the symbol s77 replaced by `replacement` (a SymInt union).
void replace_s77(nlohmann::json& doc, const nlohmann::json& replacement) {
  for (auto& [name, meta] : graph_of(doc)["tensor_values"].items()) {
    for (const char* field : {"sizes", "strides"}) {
      for (auto& s : meta[field]) {
        if (s.contains("as_expr") && s["as_expr"]["expr_str"].get<std::string>().find("s77") != std::string::npos) {
          s = replacement;
        }
      }
    }
  }
}

// Module outputs vs the libtorch reference of the same program: fp32 engines vs libtorch may sum in different
// orders; 1e-4 absolute on values of order 1 (the CPU fixture bound is 1e-3; these graphs are small).
void expect_matches_reference(const frontend::Program& program, const runtime::CompiledModule& module,
                              const std::vector<HostTensor>& inputs) {
  std::vector<HostTensor> want = runtime::run_in_libtorch(*program.graph, inputs);
  std::vector<HostTensor> got = module.execute_host(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    auto c = closeness(got[k], want[k]);
    ASSERT_TRUE(c.same_shape) << "output " << k << ": " << got[k].describe() << " vs " << want[k].describe();
    EXPECT_LE(c.max_abs, 1e-4) << "output " << k;
  }
}

TEST(HostileProgram, TrainingModeBatchNormRunsInPyTorch) {
  frontend::Program program = edited_program("tiny_resnet", [](nlohmann::json& doc) {
    for (auto& node : graph_of(doc)["nodes"]) {
      if (node["target"] != "torch.ops.aten.batch_norm.default") continue;
      for (auto& in : node["inputs"]) {
        if (in["name"] == "training") in["arg"] = {{"as_bool", true}};
      }
    }
  });
  CompilationSettings settings;
  settings.min_block_size = 1;
  auto module = compile(program, settings);
  ASSERT_NE(module, nullptr);
  size_t torch_batch_norms = 0;
  for (const ir::Node* node : module->graph().nodes()) {
    if (node->target().to_string() == "aten.batch_norm.default") ++torch_batch_norms;
  }
  EXPECT_EQ(torch_batch_norms, 5u);  // every batch norm stays a PyTorch node: none was folded or converted
  auto io = read_npz(fixture("tiny_resnet", "io_0.npz"));
  expect_matches_reference(program, *module, io_inputs(io));
}

TEST(HostileProgram, StaticZeroBatchCompilesAndRuns) {
  frontend::Program program = edited_program("tiny_mlp", [](nlohmann::json& doc) {
    replace_s77(doc, {{"as_int", 0}});
    doc["range_constraints"] = nlohmann::json::object();
  });
  CompilationSettings settings;
  settings.min_block_size = 1;
  auto module = compile(program, settings);
  ASSERT_NE(module, nullptr);
  EXPECT_GT(module->engines().size(), 0u);
  expect_matches_reference(program, *module, {HostTensor(DType::Float32, {0, 32})});
  auto reloaded = runtime::load_from_bytes(runtime::save_to_bytes(*module), "zero.kiln");
  expect_matches_reference(program, *reloaded, {HostTensor(DType::Float32, {0, 32})});
}

TEST(HostileProgram, Int64MinExponentInASizeIsACleanError) {
  const std::string pow = "Pow(Symbol('s77', positive=True, integer=True), Integer(-9223372036854775808))";
  try {
    frontend::Program program = edited_program("tiny_mlp", [&](nlohmann::json& doc) {
      auto& sizes = graph_of(doc)["tensor_values"]["linear"]["sizes"];
      sizes[0] = {{"as_expr", {{"expr_str", pow}, {"hint", nullptr}}}};
    });
    CompilationSettings settings;
    settings.min_block_size = 1;
    compile(program, settings);  // compiling is fine too; what matters is no crash or hang
  } catch (const Error& e) {
    EXPECT_NE(e.kind(), ErrorKind::Internal) << e.what();
  }
}

// A module compiled for s77 up to `max` either round-trips through save/load and matches torch on small shapes,
// or the compile fails with InvalidInput: never a .kiln that load rejects.
void expect_round_trip_or_clear_error(int64_t max) {
  frontend::Program program = edited_program("tiny_mlp", [&](nlohmann::json& doc) {
    doc["range_constraints"]["s77"]["max_val"] = max;
  });
  CompilationSettings settings;
  settings.min_block_size = 1;
  std::shared_ptr<runtime::CompiledModule> module;
  try {
    module = compile(program, settings);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    return;
  }
  ASSERT_NE(module, nullptr);
  auto reloaded = runtime::load_from_bytes(runtime::save_to_bytes(*module), "range.kiln");
  expect_matches_reference(program, *reloaded, {random_floats({3, 32}, 17)});
}

TEST(HostileProgram, RangeUpTo2To28CompilesLoadsAndRuns) { expect_round_trip_or_clear_error(int64_t{1} << 28); }

TEST(HostileProgram, RangeUpTo2To36NeverWritesAnUnloadableModule) {
  expect_round_trip_or_clear_error(int64_t{1} << 36);
}

}  // namespace
}  // namespace kiln::compiler
