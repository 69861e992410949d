#include "kiln/lowering/pass_manager.h"

#include "kiln/lowering/passes.h"
#include "kiln/support/error.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

std::shared_ptr<Pass> counting_pass(const std::string& name, int* runs, int changes) {
  return std::make_shared<FunctionPass>(name, "test pass", [runs, changes](ir::Graph&, const PassContext&) {
    return ++*runs <= changes;
  });
}

TEST(PassManager, RegisterListRemove) {
  PassManager manager;
  int a = 0;
  int b = 0;
  int c = 0;
  manager.register_pass(counting_pass("a", &a, 0));
  manager.register_pass(counting_pass("b", &b, 0));
  manager.register_pass(counting_pass("c", &c, 0), 0);
  ASSERT_EQ(manager.passes().size(), 3u);
  EXPECT_EQ(manager.passes()[0]->name(), "c");
  EXPECT_EQ(manager.passes()[2]->name(), "b");
  manager.remove_pass(1);
  EXPECT_EQ(manager.passes()[1]->name(), "b");
  EXPECT_THROW(manager.remove_pass(5), Error);
  EXPECT_THROW(manager.register_pass(counting_pass("b", &b, 0)), Error);
  EXPECT_THROW(manager.register_pass(counting_pass("d", &b, 0), 9), Error);
  EXPECT_TRUE(manager.passes(PassStage::PreLowering).empty());
}

TEST(PassManager, RunsToFixpointWithinTheIterationCap) {
  PassManager manager;
  int runs = 0;
  manager.register_pass(counting_pass("twice", &runs, 2));
  auto g = ir::parse_graph("graph(%x: f32[2]) {\n  return (%x)\n}\n");
  PassContext context;
  EXPECT_TRUE(manager.run(*g, context));
  EXPECT_EQ(runs, 3);  // changed, changed, then a round without change
  runs = 0;
  context.max_iterations = 2;
  int forever = 0;
  manager.register_pass(counting_pass("forever", &forever, 1000));
  EXPECT_TRUE(manager.run(*g, context));
  EXPECT_EQ(forever, 2);
}

TEST(PassManager, VerifiesAfterEachPassAndNamesThePass) {
  PassManager manager;
  manager.register_pass(std::make_shared<FunctionPass>("breaker", "breaks the graph", [](ir::Graph& g, const PassContext&) {
    // Moves the second node before the first, so it reads a value before its definition.
    auto nodes = g.nodes();
    g.move_before(nodes[1], nodes[0]);
    return true;
  }));
  auto g = ir::parse_graph(R"(graph(%x: f32[2]) {
  %a: f32[2] = aten.relu.default(self=%x)
  %b: f32[2] = aten.relu.default(self=%a)
  return (%b)
})");
  PassContext context;
  context.verify_each_pass = true;
  context.max_iterations = 1;
  try {
    manager.run(*g, context);
    FAIL() << "expected a verification error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lowering pass 'breaker'"), std::string::npos) << e.what();
  }
}

TEST(PassManager, DefaultTableListsEveryPassInOrder) {
  const std::string text = describe_passes();
  for (const char* name :
       {"remove_assert_nodes", "functionalize_inplace", "remove_detach", "remove_dropout",
        "canonicalize_to_copy", "canonicalize_training_ir", "replace_max_pool_with_indices",
        "canonicalize_views", "canonicalize_linear", "remove_noop_ops", "lower_quantize_dequantize",
        "decompose", "fold_batch_norm_into_conv", "fuse_pad_into_convolution", "constant_fold",
        "normalize_dims_and_slices", "cse", "remove_num_users_is_0_nodes", "repair_input_as_output"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name;
  }
  EXPECT_LT(text.find("pre_lowering"), text.find("post_lowering"));
  EXPECT_LT(text.find("decompose"), text.find("repair_input_as_output"));
  // Each pass is one line "  <index>  <name>  <description>", in list order, with a description.
  const PassManager& manager = default_pass_manager();
  for (PassStage stage : {PassStage::PreLowering, PassStage::PostLowering}) {
    const auto& passes = manager.passes(stage);
    size_t at = text.find(to_string(stage));
    for (size_t i = 0; i < passes.size(); ++i) {
      const std::string line_start = (i < 10 ? "   " : "  ") + std::to_string(i) + "  " + passes[i]->name() + " ";
      const size_t found = text.find(line_start, at);
      ASSERT_NE(found, std::string::npos) << line_start;
      const std::string line = text.substr(found, text.find('\n', found) - found);
      EXPECT_NE(line.find(passes[i]->description()), std::string::npos) << line;
      EXPECT_FALSE(passes[i]->description().empty()) << passes[i]->name();
      at = found;
    }
  }
  // The decomposition table and the keep-whole set follow the pass lists.
  EXPECT_LT(text.find("post_lowering"), text.find("decompositions"));
  EXPECT_NE(text.find(" log_softmax,"), std::string::npos);
  EXPECT_NE(text.find("aten.softmax"), std::string::npos);
}

// The whole pipeline on a small training-IR graph: in-place, dropout, conv2d + batch_norm (folded),
// log_softmax (decomposed). Weight folding changes fp32 rounding: rtol 1e-5, atol 1e-5.
TEST(PassManager, DefaultPipelineLowersTrainingIr) {
  auto g = ir::parse_graph(R"(graph(%x: f32[2, 3, 6, 6]) {
  %w: f32[4, 3, 3, 3] = parameter("conv.weight")
  %g: f32[4] = parameter("bn.weight")
  %b: f32[4] = parameter("bn.bias")
  %mean: f32[4] = buffer("bn.running_mean")
  %var: f32[4] = buffer("bn.running_var")
  %c: f32[2, 4, 6, 6] = aten.conv2d.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=1)
  %n: f32[2, 4, 6, 6] = aten.batch_norm.default(input=%c, weight=%g, bias=%b, running_mean=%mean, running_var=%var, training=False, momentum=0.1, eps=1e-05, cudnn_enabled=True)
  %r: f32[2, 4, 6, 6] = aten.relu_.default(self=%n)
  %d: f32[2, 4, 6, 6] = aten.dropout.default(input=%n, p=0.5, train=False)
  %f: f32[2, 144] = aten.flatten.using_ints(self=%d, start_dim=1, end_dim=-1)
  %l: f32[2, 144] = aten.log_softmax.int(self=%f, dim=-1, dtype=None)
  return (%l)
})");
  testing::fill_random_constants(*g, 5);
  auto original = g->clone();
  PassContext context;
  context.verify_each_pass = true;
  EXPECT_TRUE(apply_lowering_passes(*g, context));
  ir::verify(*g);
  EXPECT_EQ(ir::print_graph(*g), ir::print_graph(*ir::parse_graph(R"(graph(%x: f32[2, 3, 6, 6]) {
  %convolution_folded_weight: f32[4, 3, 3, 3] = constant("convolution_folded_weight")
  %convolution_folded_bias: f32[4] = constant("convolution_folded_bias")
  %convolution: f32[2, 4, 6, 6] = aten.convolution.default(input=%x, weight=%convolution_folded_weight, bias=%convolution_folded_bias, stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %relu: f32[2, 4, 6, 6] = aten.relu.default(self=%convolution)
  %reshape: f32[2, 144] = aten.reshape.default(self=%relu, shape=[2, 144])
  %softmax: f32[2, 144] = aten.softmax.int(self=%reshape, dim=1, dtype=None)
  %log: f32[2, 144] = aten.log.default(self=%softmax)
  return (%log)
})")));
  testing::expect_same_values(*original, *g, 1e-5, 1e-5);
}

}  // namespace
}  // namespace kiln::lowering
