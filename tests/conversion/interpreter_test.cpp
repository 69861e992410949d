// The interpreter on whole programs and its bookkeeping: every lowered fixture (both export forms) converts,
// builds and matches the fixture's torch outputs (tiny_convnet's lgamma output included); layer names follow
// nodes; weights land in the refit map; input ranges come from the symbol ranges and hints or from user
// specs; a node without a converter is a clear error; the engine segments of a partitioned graph convert and
// build. The op without a converter is special_airy_ai: no model uses it and no inference engine has a layer
// for it.

#include <gtest/gtest.h>

#include "fixture_paths.h"

#include <cmath>
#include <filesystem>

#include "kiln/conversion/interpreter.h"
#include "kiln/conversion/segment_conversion.h"
#include "kiln/engine/builder.h"
#include "kiln/engine/execution_context.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/int8_weight_scales.h"
#include "kiln/ir/text.h"
#include "kiln/lowering/pass_manager.h"
#include "kiln/partitioning/partitioners.h"
#include "kiln/support/error.h"
#include "kiln/support/npz.h"

namespace kiln::conversion {
namespace {

namespace fs = std::filesystem;

std::vector<HostTensor> run_plan(const std::shared_ptr<engine::Plan>& plan, const InterpreterResult& r,
                                 const std::vector<HostTensor>& inputs) {
  engine::ExecutionContext ctx(plan);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ctx.set_input_shape(r.input_bindings[i], inputs[i].sizes());
    ctx.set_tensor_address(r.input_bindings[i], const_cast<uint8_t*>(inputs[i].data()));
  }
  std::vector<HostTensor> outs;
  for (const std::string& name : r.output_bindings)
    outs.emplace_back(plan->binding(name).dtype, ctx.tensor_shape(name));
  for (size_t i = 0; i < outs.size(); ++i)
    ctx.set_tensor_address(r.output_bindings[i], outs[i].mutable_data());
  ctx.execute();
  return outs;
}

class FixturePrograms : public ::testing::TestWithParam<std::string> {};

// The issue's model criterion: cosine similarity >= 0.9999 and max abs error <= 1e-3 against torch 2.11's
// outputs (fp32 on both sides; differences come from accumulation order only).
TEST_P(FixturePrograms, ConvertBuildAndMatchTorch) {
  const std::string path = GetParam();
  frontend::Program p = frontend::load_program(path);
  lowering::apply_lowering_passes(*p.graph, {});
  settings::CompilationSettings settings;
  settings.timing_cache_path = "";  // no timing-cache file from tests
  InterpreterResult r = Interpreter(*p.graph, settings).run();
  engine::BuilderConfig config = builder_config_from_settings(settings);
  config.threads = 2;
  config.timing_iterations = 1;
  if (r.dynamic) config.profiles.push_back(r.profile);
  auto plan = engine::Builder(config).build(*r.network);
  const fs::path dir = fs::path(path).parent_path();
  int cases = 0;
  for (int n = 0; fs::exists(dir / ("io_" + std::to_string(n) + ".npz")); ++n, ++cases) {
    auto arrays = read_npz((dir / ("io_" + std::to_string(n) + ".npz")).string());
    std::vector<HostTensor> inputs;
    for (size_t k = 0; k < p.graph->inputs().size(); ++k)
      inputs.push_back(arrays.at("input_" + std::to_string(k)));
    auto outs = run_plan(plan, r, inputs);
    for (size_t k = 0; k < outs.size(); ++k) {
      const HostTensor& want = arrays.at("output_" + std::to_string(k));
      ASSERT_EQ(outs[k].sizes(), want.sizes()) << path << " io_" << n << " output " << k;
      double dot = 0, ga = 0, wa = 0, max_err = 0;
      for (int64_t i = 0; i < want.numel(); ++i) {
        const double g = outs[k].get_as_double(i), w = want.get_as_double(i);
        dot += g * w;
        ga += g * g;
        wa += w * w;
        max_err = std::max(max_err, std::fabs(g - w));
      }
      EXPECT_GE(dot / std::sqrt(ga * wa + 1e-30), 0.9999) << path << " io_" << n << " output " << k;
      EXPECT_LE(max_err, 1e-3) << path << " io_" << n << " output " << k;
    }
  }
  EXPECT_GT(cases, 0);
}

using kiln::test_data::fixture_programs;

INSTANTIATE_TEST_SUITE_P(Fixtures, FixturePrograms, ::testing::ValuesIn(fixture_programs()),
                         [](const auto& info) {
                           std::string s = fs::path(info.param).parent_path().filename().string() + "_" +
                                           fs::path(info.param).stem().string();
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

const char* kSmall =
    "graph(%x: f32[s0, 8]) {\n"
    "  symbol s0 in [2, 32] hint 4\n"
    "  %w: f32[3, 8] = parameter(\"fc.weight\")\n"
    "  %b: f32[3] = parameter(\"fc.bias\")\n"
    "  %lin: f32[s0, 3] = aten.linear.default(input=%x, weight=%w, bias=%b)\n"
    "  %act: f32[s0, 3] = aten.relu.default(self=%lin)\n"
    "  return (%act, %x)\n"
    "}\n";

std::unique_ptr<ir::Graph> small_graph() {
  auto g = ir::parse_graph(kSmall);
  for (ir::Value* c : g->constants()) {
    std::vector<float> v(
        static_cast<size_t>(c->meta().static_sizes()->at(0) * (c->meta().rank() == 2 ? 8 : 1)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    c->set_data(HostTensor::from_floats(v, *c->meta().static_sizes()));
  }
  return g;
}

TEST(Interpreter, NamesLayersAfterNodesAndRecordsWeights) {
  auto g = small_graph();
  settings::CompilationSettings s;
  InterpreterResult r = Interpreter(*g, s).run();
  bool saw_lin = false, saw_act = false;
  for (const auto& layer : r.network->layers()) {
    saw_lin = saw_lin || layer->name.rfind("lin", 0) == 0;
    saw_act = saw_act || layer->name.rfind("act", 0) == 0;
  }
  EXPECT_TRUE(saw_lin);
  EXPECT_TRUE(saw_act);
  EXPECT_EQ(r.weight_refit_map.count("fc.weight"), 1u);
  EXPECT_EQ(r.weight_refit_map.count("fc.bias"), 1u);
  ASSERT_EQ(r.output_bindings.size(), 2u);
  EXPECT_EQ(r.output_bindings[0], "act");
  // The second output is the input itself: the network gets a distinct output tensor for it.
  EXPECT_NE(r.output_bindings[1], "x");
  EXPECT_EQ(r.input_bindings, std::vector<std::string>{"x"});
}

// A Q/DQ program's weight scales (node metadata that lowering sets, ir/int8_weight_scales.h) reach the engine
// weights of the convolution and of a linear layer's constant operand.
TEST(Interpreter, Int8WeightScalesReachTheEngineWeights) {
  auto g = ir::parse_graph(R"(graph(%x: f32[1, 2, 3, 3], %v: f32[4, 2]) {
  %w: f32[2, 2, 1, 1] = constant("conv_w", data=[0.3, -0.2, 0.1, 0.5])
  %fw: f32[3, 2] = constant("fc_w", data=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
  %y: f32[1, 2, 3, 3] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %z: f32[4, 3] = aten.linear.default(input=%v, weight=%fw, bias=None)
  return (%y, %z)
})");
  for (ir::Node* n : g->nodes()) {
    const std::string weight = n->target().name == "convolution" ? "conv_w" : "fc_w";
    n->mutable_metadata()[ir::kInt8WeightScalesKeyPrefix + weight] = weight == "conv_w" ? "0.1 0.5" : "1 2 3";
  }
  InterpreterResult r = Interpreter(*g, settings::CompilationSettings{}).run();
  std::map<std::string, std::vector<float>> scales;
  for (const auto& layer : r.network->layers()) {
    for (const engine::Weights& w : layer->weights) {
      if (!w.int8_scales.empty()) scales[w.name] = w.int8_scales;
    }
  }
  EXPECT_EQ(scales["conv_w"], (std::vector<float>{0.1f, 0.5f}));
  EXPECT_EQ(scales["fc_w"], (std::vector<float>{1.0f, 2.0f, 3.0f}));
}

TEST(Interpreter, RangesFromSymbolsAndHints) {
  auto g = small_graph();
  settings::CompilationSettings s;
  InterpreterResult r = Interpreter(*g, s).run();
  ASSERT_TRUE(r.dynamic);
  const engine::ShapeRange& range = r.profile.get("x");
  EXPECT_EQ(range.min, (engine::Dims{2, 8}));
  EXPECT_EQ(range.opt, (engine::Dims{4, 8}));
  EXPECT_EQ(range.max, (engine::Dims{32, 8}));
  EXPECT_EQ(r.network->tensor(r.network->inputs()[0])->dims(), (engine::Dims{-1, 8}));
}

TEST(Interpreter, UserSpecsOverrideRanges) {
  auto g = small_graph();
  settings::CompilationSettings s;
  InterpreterOptions o;
  std::map<std::string, engine::ShapeRange> specs = {{"x", {{1, 8}, {3, 8}, {9, 8}}}};
  auto [ranges, hints] = symbol_ranges_from_specs(*g, specs);
  EXPECT_EQ(ranges.at("s0"), (ir::SymRange{1, 9}));
  EXPECT_EQ(hints.at("s0"), 3);
  o.symbol_ranges = ranges;
  o.symbol_hints = hints;
  InterpreterResult r = Interpreter(*g, s, o).run();
  EXPECT_EQ(r.profile.get("x").max, (engine::Dims{9, 8}));
  InterpreterOptions direct;
  direct.input_ranges = specs;
  InterpreterResult r2 = Interpreter(*g, s, direct).run();
  EXPECT_EQ(r2.profile.get("x").opt, (engine::Dims{3, 8}));
  // A spec of the wrong rank is rejected with the input's name.
  std::map<std::string, engine::ShapeRange> bad = {{"x", {{1}, {3}, {9}}}};
  EXPECT_THROW(symbol_ranges_from_specs(*g, bad), Error);
}

TEST(Interpreter, UnboundedSymbolGetsAFiniteMax) {
  auto g = ir::parse_graph(
      "graph(%x: f32[s0, 4]) {\n  symbol s0 in [1, inf] hint 5\n"
      "  %y: f32[s0, 4] = aten.relu.default(self=%x)\n  return (%y)\n}\n");
  settings::CompilationSettings s;
  InterpreterResult r = Interpreter(*g, s).run();
  EXPECT_EQ(r.profile.get("x").max, (engine::Dims{20, 4}));
}

TEST(Interpreter, MissingConverterNamesTheNode) {
  auto g = ir::parse_graph(
      "graph(%x: f32[2, 4]) {\n  %y: f32[2, 4] = aten.special_airy_ai.default(x=%x)\n  return (%y)\n}\n");
  settings::CompilationSettings s;
  try {
    Interpreter(*g, s).run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("special_airy_ai"), std::string::npos) << e.what();
  }
}

TEST(Interpreter, ConvertEngineSegmentsOfAPartitionedGraph) {
  auto g = ir::parse_graph(
      "graph(%x: f32[2, 4]) {\n"
      "  %a: f32[2, 4] = aten.relu.default(self=%x)\n"
      "  %b: f32[2, 4] = aten.special_airy_ai.default(x=%a)\n"
      "  %c: f32[2, 4] = aten.sigmoid.default(self=%b)\n"
      "  return (%c)\n}\n");
  settings::CompilationSettings s;
  s.min_block_size = 1;
  s.timing_cache_path = "";
  auto part = partitioning::fast_partition(*g, s);
  auto built = convert_engine_segments(*part.graph, s);
  ASSERT_EQ(built.size(), 2u);
  for (const auto& [name, seg] : built) {
    EXPECT_EQ(seg.name, name);
    ASSERT_EQ(seg.input_bindings.size(), 1u);
    ASSERT_EQ(seg.output_bindings.size(), 1u);
    EXPECT_NO_THROW(seg.plan->binding(seg.input_bindings[0]));
    EXPECT_NO_THROW(seg.plan->binding(seg.output_bindings[0]));
  }
}

TEST(Interpreter, BuilderConfigFollowsSettings) {
  settings::CompilationSettings s;
  s.enabled_precisions = {settings::Precision::F32, settings::Precision::F16};
  s.immutable_weights = false;
  s.strip_engine_weights = true;
  engine::BuilderConfig c = builder_config_from_settings(s);
  EXPECT_EQ(c.precisions.size(), 2u);
  EXPECT_TRUE(c.refittable);
  EXPECT_TRUE(c.strip_weights);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_FALSE(c.int8_first_last);  // (the first and last layers stay floating by default)
  s.quantize_first_last = true;
  EXPECT_TRUE(builder_config_from_settings(s).int8_first_last);
}

}  // namespace
}  // namespace kiln::conversion
