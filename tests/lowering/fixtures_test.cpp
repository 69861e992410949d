// Every fixture in tests/data, both export forms, lowers with the default pipeline to a verified graph with no
// training-IR or in-place op left, and still matches torch's outputs through the reference executor.

#include <filesystem>
#include <map>
#include <set>

#include "fixture_paths.h"
#include "kiln/frontend/program.h"
#include "kiln/lowering/pass_manager.h"
#include "kiln/support/npz.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

namespace fs = std::filesystem;

using kiln::test_data::fixture_programs;

// Ops the canonical opset must not contain after lowering.
std::string training_ir_op(const ir::Node& node) {
  static const std::set<std::string> kForbidden = {
      "aten.dropout", "aten.native_dropout", "aten.feature_dropout", "aten._assert_tensor_metadata",
      "aten._assert_scalar", "aten._assert_async", "aten.sym_constrain_range",
      "aten.sym_constrain_range_for_size", "aten.to", "aten.detach", "aten.alias", "aten.lift_fresh_copy",
      "aten.conv1d", "aten.conv2d", "aten.conv3d", "aten.conv_transpose1d", "aten.conv_transpose2d",
      "aten.conv_transpose3d", "aten._native_batch_norm_legit_no_training", "aten._native_batch_norm_legit",
      "aten.view", "aten._unsafe_view", "aten.flatten", "aten.unflatten", "aten.contiguous", "aten.clone",
      "aten.log_softmax", "aten._log_softmax", "aten.transpose", "aten.t", "aten.max_pool2d_with_indices"};
  const std::string& name = node.target().name;
  if (node.target().ns == "aten" && name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_') {
    return "in-place " + node.target().to_string();
  }
  if (kForbidden.count(node.target().packet()) > 0) return node.target().to_string();
  if (node.target().packet() == "aten.batch_norm" && node.arg("training").as_bool()) return "batch_norm(training)";
  return "";
}

class LoweringFixtures : public ::testing::TestWithParam<std::string> {};

TEST_P(LoweringFixtures, LowersCleanlyAndKeepsOutputs) {
  const std::string path = GetParam();
  frontend::Program program = frontend::load_program(path);
  ir::Graph& graph = *program.graph;
  PassContext context;
  context.verify_each_pass = true;
  apply_lowering_passes(graph, context);
  ir::verify(graph);
  for (const ir::Node* node : graph.nodes()) {
    EXPECT_EQ(training_ir_op(*node), "") << "left in " << path << " at node " << node->name();
  }
  testing::expect_schema_order(graph);
#ifdef KILN_LOWERING_HAVE_REFERENCE
  const fs::path dir = fs::path(path).parent_path();
  int cases = 0;
  for (int n = 0; fs::exists(dir / ("io_" + std::to_string(n) + ".npz")); ++n, ++cases) {
    auto arrays = read_npz((dir / ("io_" + std::to_string(n) + ".npz")).string());
    std::vector<HostTensor> inputs;
    for (size_t k = 0; k < graph.inputs().size(); ++k) inputs.push_back(arrays.at("input_" + std::to_string(k)));
    const auto outputs = runtime::run_in_libtorch(graph, inputs);
    // The fixtures were produced by torch 2.11 and the reference runs libtorch's fp32 kernels after weight
    // folding: 1e-4 absolute bounds the drift on these O(1)-valued outputs.
    for (size_t k = 0; k < outputs.size(); ++k) {
      const HostTensor& want = arrays.at("output_" + std::to_string(k));
      ASSERT_EQ(want.sizes(), outputs[k].sizes()) << path << " output " << k;
      double max_err = 0;
      for (int64_t i = 0; i < want.numel(); ++i) {
        max_err = std::max(max_err, std::abs(want.get_as_double(i) - outputs[k].get_as_double(i)));
      }
      EXPECT_LE(max_err, 1e-4) << path << " case " << n << " output " << k;
    }
  }
  EXPECT_GT(cases, 0) << "no io_N.npz next to " << path;
#endif
}

INSTANTIATE_TEST_SUITE_P(All, LoweringFixtures, ::testing::ValuesIn(fixture_programs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           const fs::path p(info.param);
                           std::string name = p.parent_path().filename().string() + "_" + p.stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// The op counts of a lowered graph, one "count target" a line (names and order aside).
std::string op_histogram(const ir::Graph& graph) {
  std::map<std::string, int> counts;
  for (const ir::Node* node : graph.nodes()) ++counts[node->target().to_string()];
  std::string text;
  for (const auto& [op, count] : counts) text += std::to_string(count) + " " + op + "\n";
  return text;
}

// A fixture exported in both forms (training IR and Core ATen) lowers to graphs with the same ops: lowering
// maps both to one canonical opset (linear layers included).
TEST(LoweringFixtureForms, BothFormsReachTheSameOps) {
  const fs::path root(KILN_TEST_DATA_DIR);
  int pairs = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    const fs::path training = dir.path() / "model.pt2";
    const fs::path core = dir.path() / "model_core_aten.pt2";
    if (!fs::exists(training) || !fs::exists(core)) continue;
    ++pairs;
    frontend::Program a = frontend::load_program(training.string());
    frontend::Program b = frontend::load_program(core.string());
    apply_lowering_passes(*a.graph);
    apply_lowering_passes(*b.graph);
    EXPECT_EQ(op_histogram(*a.graph), op_histogram(*b.graph)) << dir.path().filename();
  }
  EXPECT_GT(pairs, 0) << "no fixture in " << root << " has both forms";
}

}  // namespace
}  // namespace kiln::lowering
