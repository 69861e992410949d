// The partitioners on hand-written graphs: segment lists, boundaries and structural equivalence.

#include "kiln/partitioning/partitioners.h"

#include <gtest/gtest.h>

#include "kiln/partitioning/atomic_subgraphs.h"
#include "kiln/support/error.h"
#include "partitioning/test_graphs.h"

namespace kiln::partitioning {
namespace {

using testing::expect_same_function;
using testing::parse;
using testing::register_stubs;
using testing::summary;

conversion::ConverterRegistry arithmetic_registry() {
  conversion::ConverterRegistry reg;
  register_stubs(reg, {"aten.add.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.cat.default",
                       "aten.relu.default", "aten.cos.default", "aten.sub.Tensor", "aten.atan2.default"});
  return reg;
}

settings::CompilationSettings settings_with_block(int64_t min_block_size) {
  settings::CompilationSettings s;
  s.min_block_size = min_block_size;
  return s;
}

// The number of segments a naive walk in program order makes (a new segment at every change of side).
int naive_segments(const ir::Graph& g, const conversion::ConverterRegistry& reg) {
  int count = 0;
  int last = -1;
  for (const ir::Node* n : g.nodes()) {
    int side = is_node_supported(*n, {}, reg).supported ? 1 : 0;
    count += side != last;
    last = side;
  }
  return count;
}

TEST(Partitioners, ThreeSegmentsWhereANaiveWalkMakesSeven) {
  auto g = parse(testing::kThreeVsSeven);
  auto reg = arithmetic_registry();
  EXPECT_EQ(naive_segments(*g, reg), 7);
  const std::string want =
      "_run_on_acc_0:add,mul,div | _run_on_gpu_1:lx,ly,ld | _run_on_acc_2:cat";
  for (bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "fast" : "global");
    settings::CompilationSettings s = settings_with_block(1);
    PartitionResult r = fast ? fast_partition(*g, s, reg) : global_partition(*g, s, reg);
    EXPECT_EQ(summary(*r.graph), want);
    expect_same_function(*g, *r.graph);
    std::vector<SegmentInfo> segs = describe_segments(*r.graph);
    ASSERT_EQ(segs.size(), 3u);
    EXPECT_EQ(segs[0].inputs, (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(segs[0].outputs, (std::vector<std::string>{"add", "mul", "div"}));
    EXPECT_EQ(segs[1].inputs, (std::vector<std::string>{"x", "y", "div"}));
    EXPECT_EQ(segs[1].outputs, (std::vector<std::string>{"lx", "ly", "ld"}));
    EXPECT_EQ(segs[2].inputs, (std::vector<std::string>{"add", "mul", "div", "lx", "ly", "ld"}));
    EXPECT_EQ(segs[2].outputs, (std::vector<std::string>{"cat"}));
    EXPECT_EQ(r.support.supported, 4);
    EXPECT_EQ(r.support.total, 7);
    // The engine segment node passes its inputs as input_0.. and its subgraph mirrors the boundary.
    const ir::Node* seg = r.graph->find_node("_run_on_acc_0");
    ASSERT_NE(seg, nullptr);
    EXPECT_TRUE(ir::is_engine_segment(*seg));
    EXPECT_EQ(seg->arg("input_1").as_tensor()->name(), "y");
    EXPECT_EQ(seg->subgraph()->inputs().size(), 2u);
    EXPECT_EQ(seg->subgraph()->outputs().size(), 3u);
  }
}

TEST(Partitioners, DiamondThroughPyTorchNeverFormsACycle) {
  auto g = parse(R"(graph(%x: f32[8]) {
  %r: f32[8] = aten.relu.default(self=%x)
  %s: f32[8] = aten.sin.default(self=%r)
  %c: f32[8] = aten.cos.default(self=%r)
  %a: f32[8] = aten.add.Tensor(self=%s, other=%c, alpha=1)
  return (%a)
}
)");
  auto reg = arithmetic_registry();
  for (bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "fast" : "global");
    settings::CompilationSettings s = settings_with_block(1);
    PartitionResult r = fast ? fast_partition(*g, s, reg) : global_partition(*g, s, reg);
    expect_same_function(*g, *r.graph);
    if (fast) {
      EXPECT_EQ(summary(*r.graph), "_run_on_acc_0:r,c | _run_on_gpu_1:s | _run_on_acc_2:a");
    } else {
      // relu cannot join {cos, add}: the path relu -> sin -> add would leave and re-enter the engine.
      EXPECT_EQ(summary(*r.graph), "_run_on_acc_0:r | _run_on_gpu_1:s | _run_on_acc_2:c,a");
    }
  }
}

TEST(Partitioners, MultipleOutputsAndANodeFeedingBothSides) {
  auto g = parse(R"(graph(%x: f32[8], %y: f32[8]) {
  %w: f32[8] = parameter("w")
  %r: f32[8] = aten.relu.default(self=%x)
  %l: f32[8] = aten.special_airy_ai.default(x=%r)
  %m: f32[8] = aten.mul.Tensor(self=%r, other=%w)
  %c: f32[8] = aten.cos.default(self=%m)
  %a: f32[8] = aten.add.Tensor(self=%l, other=%c, alpha=1)
  return (%a, %m, %y, %w, %l)
}
)");
  auto reg = arithmetic_registry();
  for (bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "fast" : "global");
    PartitionResult r =
        fast ? fast_partition(*g, settings_with_block(1), reg) : global_partition(*g, settings_with_block(1), reg);
    expect_same_function(*g, *r.graph);
    std::vector<SegmentInfo> segs = describe_segments(*r.graph);
    const ir::Node* with_mul = nullptr;
    if (fast) {
      EXPECT_EQ(summary(*r.graph), "_run_on_acc_0:r,m,c | _run_on_gpu_1:l | _run_on_acc_2:a");
      // r feeds the engine (mul) and PyTorch (special_airy_ai); m is a graph output and is used inside.
      EXPECT_EQ(segs[0].outputs, (std::vector<std::string>{"r", "m", "c"}));
      EXPECT_EQ(segs[2].inputs, (std::vector<std::string>{"l", "c"}));
      with_mul = r.graph->find_node("_run_on_acc_0");
    } else {
      // Also three segments: relu cannot join {mul, cos, add} (relu -> special_airy_ai -> add would be a
      // cycle).
      EXPECT_EQ(summary(*r.graph), "_run_on_acc_0:r | _run_on_gpu_1:l | _run_on_acc_2:m,c,a");
      EXPECT_EQ(segs[0].outputs, (std::vector<std::string>{"r"}));
      EXPECT_EQ(segs[2].inputs, (std::vector<std::string>{"r", "l"}));
      EXPECT_EQ(segs[2].outputs, (std::vector<std::string>{"m", "a"}));
      with_mul = r.graph->find_node("_run_on_acc_2");
    }
    // The weight moved into the segment but stays in the parent too, because it is a graph output.
    ASSERT_NE(with_mul, nullptr);
    ASSERT_EQ(with_mul->subgraph()->constants().size(), 1u);
    EXPECT_EQ(with_mul->subgraph()->constants()[0]->fqn(), "w");
    EXPECT_NE(r.graph->find_value("w"), nullptr);
  }
}

const char* kSmallBlocks = R"(graph(%x: f32[8]) {
  %r1: f32[8] = aten.relu.default(self=%x)
  %c1: f32[8] = aten.cos.default(self=%r1)
  %r2: f32[8] = aten.relu.default(self=%c1)
  %l1: f32[8] = aten.special_airy_ai.default(x=%r2)
  %r3: f32[8] = aten.relu.default(self=%l1)
  %l2: f32[8] = aten.special_airy_ai.default(x=%r3)
  %c2: f32[8] = aten.cos.default(self=%l2)
  %r4: f32[8] = aten.relu.default(self=%c2)
  return (%r4)
}
)";

TEST(Partitioners, MinBlockSizeGivesSmallSegmentsBackToPyTorch) {
  auto g = parse(kSmallBlocks);
  auto reg = arithmetic_registry();
  for (bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "fast" : "global");
    PartitionResult r =
        fast ? fast_partition(*g, settings_with_block(2), reg) : global_partition(*g, settings_with_block(2), reg);
    expect_same_function(*g, *r.graph);
    // The lone relu r3 goes back and the PyTorch run l1, r3, l2 becomes one.
    EXPECT_EQ(summary(*r.graph), "_run_on_acc_0:r1,c1,r2 | _run_on_gpu_1:l1,r3,l2 | _run_on_acc_2:c2,r4");
    r = fast ? fast_partition(*g, settings_with_block(3), reg) : global_partition(*g, settings_with_block(3), reg);
    EXPECT_EQ(summary(*r.graph), "_run_on_acc_0:r1,c1,r2 | _run_on_gpu_1:l1,r3,l2,c2,r4");
    r = fast ? fast_partition(*g, settings_with_block(5), reg) : global_partition(*g, settings_with_block(5), reg);
    EXPECT_EQ(summary(*r.graph), "_run_on_gpu_0:r1,c1,r2,l1,r3,l2,c2,r4");
    expect_same_function(*g, *r.graph);
  }
}

TEST(Partitioners, TorchExecutedOpsAreHonoured) {
  auto g = parse(kSmallBlocks);
  auto reg = arithmetic_registry();
  settings::CompilationSettings s = settings_with_block(1);
  s.torch_executed_ops = {"aten.cos.default"};
  PartitionResult r = fast_partition(*g, s, reg);
  EXPECT_EQ(summary(*r.graph),
            "_run_on_acc_0:r1 | _run_on_gpu_1:c1 | _run_on_acc_2:r2 | _run_on_gpu_3:l1 | _run_on_acc_4:r3 | "
            "_run_on_gpu_5:l2,c2 | _run_on_acc_6:r4");
}

TEST(Partitioners, RequireFullCompilationListsEveryUnsupportedNode) {
  auto g = parse(kSmallBlocks);
  auto reg = arithmetic_registry();
  settings::CompilationSettings s;
  s.require_full_compilation = true;
  for (bool fast : {true, false}) {
    try {
      if (fast) {
        fast_partition(*g, s, reg);
      } else {
        global_partition(*g, s, reg);
      }
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
      const std::string what = e.what();
      EXPECT_NE(what.find("2 nodes are not supported"), std::string::npos) << what;
      EXPECT_NE(what.find("l1 (aten.special_airy_ai.default): no converter"), std::string::npos) << what;
      EXPECT_NE(what.find("l2 (aten.special_airy_ai.default)"), std::string::npos) << what;
    }
  }
  // Fully supported: one engine regardless of min_block_size.
  auto small = parse(R"(graph(%x: f32[8]) {
  %r: f32[8] = aten.relu.default(self=%x)
  return (%r)
}
)");
  PartitionResult r = fast_partition(*small, s, reg);
  EXPECT_EQ(summary(*r.graph), "_run_on_acc_0:r");
}

TEST(Partitioners, AtomicSubgraphsMoveAsOneUnit) {
  // mul -> add is atomic: the walk may not place the mul in the first engine and the add in a later one.
  auto g = parse(R"(graph(%x: f32[8]) {
  %m: f32[8] = aten.mul.Tensor(self=%x, other=%x)
  %l: f32[8] = aten.special_airy_ai.default(x=%x)
  %c: f32[8] = aten.cos.default(self=%l)
  %a: f32[8] = aten.add.Tensor(self=%m, other=%c, alpha=1)
  return (%a)
}
)");
  auto reg = arithmetic_registry();
  PartitionResult r = fast_partition(*g, settings_with_block(1), reg);
  expect_same_function(*g, *r.graph);
  EXPECT_EQ(summary(*r.graph), "_run_on_gpu_0:l | _run_on_acc_1:m,c,a");
  auto matches = find_atomic_subgraphs(*g);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].pattern, "mul_add");
}

TEST(Partitioners, PartitionDispatchesOnUseFastPartitioner) {
  auto g = parse(testing::kThreeVsSeven);
  auto reg = arithmetic_registry();
  settings::CompilationSettings s = settings_with_block(1);
  s.use_fast_partitioner = false;
  PartitionResult r = partition(*g, s, reg);
  EXPECT_EQ(describe_segments(*r.graph).size(), 3u);
}

TEST(Partitioners, HierarchicalTagsSegmentsByBackend) {
  auto g = parse(R"(graph(%x: f32[8]) {
  %r: f32[8] = aten.relu.default(self=%x)
  %s: f32[8] = aten.sin.default(self=%r)
  %a: f32[8] = aten.add.Tensor(self=%s, other=%x, alpha=1)
  %c: f32[8] = aten.cos.default(self=%a)
  %l: f32[8] = aten.special_airy_ai.default(x=%c)
  %r2: f32[8] = aten.relu.default(self=%l)
  return (%r2)
}
)");
  std::map<std::string, BackendSupport> support = {
      {"cuda", op_set_backend_support({"aten.relu", "aten.sin.default"})},
      {"cpu", op_set_backend_support({"aten.relu.default", "aten.add", "aten.cos"})}};
  settings::CompilationSettings s = settings_with_block(1);
  PartitionResult r = hierarchical_adjacency_partition(*g, support, {"cuda", "cpu"}, s);
  expect_same_function(*g, *r.graph);
  EXPECT_EQ(summary(*r.graph),
            "_run_on_acc_cuda_0:r,s | _run_on_acc_cpu_1:a,c | _run_on_gpu_2:l | _run_on_acc_cuda_3:r2");
  std::vector<SegmentInfo> segs = describe_segments(*r.graph);
  EXPECT_EQ(segs[0].backend, "cuda");
  EXPECT_EQ(segs[1].backend, "cpu");
  EXPECT_EQ(segs[2].backend, "torch");
  EXPECT_EQ(r.support.supported, 5);
  // With cpu first, relu goes to cpu and the first segment becomes r alone.
  r = hierarchical_adjacency_partition(*g, support, {"cpu", "cuda"}, s);
  EXPECT_EQ(summary(*r.graph),
            "_run_on_acc_cpu_0:r | _run_on_acc_cuda_1:s | _run_on_acc_cpu_2:a,c | _run_on_gpu_3:l | "
            "_run_on_acc_cpu_4:r2");
  EXPECT_THROW(hierarchical_adjacency_partition(*g, support, {"tpu"}, s), Error);
}

TEST(Partitioners, ResourcePartitionSplitsOversizedSegmentsKeepingFusionsWhole) {
  register_atomic_subgraph("test_atan2_relu_mul", "aten.atan2 -> aten.relu -> aten.mul");
  auto g = parse(R"(graph(%x: f32[1000]) {
  %w0: f32[1000] = parameter("w0")
  %w3: f32[1000] = parameter("w3")
  %w4: f32[1000] = parameter("w4")
  %w5: f32[1000] = parameter("w5")
  %w6: f32[1000] = parameter("w6")
  %s0: f32[1000] = aten.sub.Tensor(self=%x, other=%w0, alpha=1)
  %a1: f32[1000] = aten.atan2.default(self=%s0, other=%s0)
  %a2: f32[1000] = aten.relu.default(self=%a1)
  %a3: f32[1000] = aten.mul.Tensor(self=%a2, other=%w3)
  %s4: f32[1000] = aten.sub.Tensor(self=%a3, other=%w4, alpha=1)
  %m: f32[1000] = aten.mul.Tensor(self=%s4, other=%w5)
  %ad: f32[1000] = aten.add.Tensor(self=%m, other=%w6, alpha=1)
  return (%ad)
}
)");
  auto reg = arithmetic_registry();
  PartitionResult r = fast_partition(*g, settings_with_block(1), reg);
  EXPECT_EQ(describe_segments(*r.graph).size(), 1u);
  EXPECT_EQ(describe_segments(*r.graph)[0].weight_bytes, 20000);
  // Budget 6000 bytes (1.5 weights): atan2 -> relu -> mul would be cut after relu; two of its three nodes fit
  // with s0, so it stays whole on that side; mul -> add would be cut before the mul, so it moves whole to the
  // next piece.
  std::unique_ptr<ir::Graph> split = resource_partition(*r.graph, 6000);
  expect_same_function(*g, *split);
  EXPECT_EQ(summary(*split), "_run_on_acc_0:s0,a1,a2,a3 | _run_on_acc_1:s4 | _run_on_acc_2:m,ad");
  std::vector<SegmentInfo> segs = describe_segments(*split);
  EXPECT_EQ(segs[0].weight_bytes, 8000);
  EXPECT_EQ(segs[2].weight_bytes, 8000);
  // A budget that fits leaves the graph as it was.
  EXPECT_EQ(summary(*resource_partition(*r.graph, 20000)), "_run_on_acc_0:s0,a1,a2,a3,s4,m,ad");
  EXPECT_THROW(resource_partition(*r.graph, 0), Error);
  EXPECT_GT(default_cpu_memory_budget(), 0);
  unregister_atomic_subgraph("test_atan2_relu_mul");
}

TEST(AtomicSubgraphs, PatternTextAndBuiltins) {
  AtomicPattern p = AtomicPattern::parse("x", "aten.conv2d | aten.convolution -> aten.relu");
  EXPECT_EQ(p.to_string(), "aten.conv2d|aten.convolution -> aten.relu");
  EXPECT_THROW(AtomicPattern::parse("bad", "aten.relu"), Error);
  EXPECT_THROW(AtomicPattern::parse("bad", "aten.relu -> "), Error);
  std::vector<std::string> names;
  for (const AtomicPattern& a : atomic_subgraphs()) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv_bn_activation", "conv_activation", "mul_add", "mul_mul"}));
  // conv -> bn -> relu in Core ATen form (multi-output batch norm whose extra outputs are unused).
  auto g = parse(R"(graph(%x: f32[1, 3, 8, 8]) {
  %w: f32[4, 3, 3, 3] = parameter("w")
  %b: f32[4] = parameter("b")
  %conv: f32[1, 4, 6, 6] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %bn: f32[1, 4, 6, 6], %bn_1: f32[0], %bn_2: f32[0] = aten._native_batch_norm_legit_no_training.default(input=%conv, weight=%b, bias=%b, running_mean=%b, running_var=%b, momentum=0.1, eps=1e-05)
  %r: f32[1, 4, 6, 6] = aten.relu.default(self=%bn)
  %r2: f32[1, 4, 6, 6] = aten.relu.default(self=%conv)
  return (%r)
}
)");
  // conv has two users here, so conv -> bn -> relu is not atomic; bn alone starts no pattern.
  EXPECT_TRUE(find_atomic_subgraphs(*g).empty());
}

}  // namespace
}  // namespace kiln::partitioning
