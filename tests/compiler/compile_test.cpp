// compiler::compile: phases, PyTorch-only modules, build-failure fallback, input specs, runtime settings (CUDA graphs,
// TF32) reaching the module, its archive and the builder.

#include "kiln/compiler/compile.h"

#include <atomic>

#include <gtest/gtest.h>

#include "compiler/compile_test_util.h"
#include "kiln/conversion/registry.h"
#include "kiln/conversion/segment_conversion.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/segment.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/settings/cache_key.h"
#include "kiln/settings/settings_json.h"
#include "kiln/support/error.h"
#include "runtime/engine_threads.h"

namespace kiln::compiler {
namespace {

using testing_util::closeness;
using testing_util::fixture;
using testing_util::io_inputs;

// Every user output of tiny_mlp's io_0 must match. Tolerance: cosine >= 0.9999 and max abs <= 1e-3, the fp32
// CPU bound of the issue (engines and libtorch may sum in different orders).
void expect_matches_io(const runtime::CompiledModule& module, const std::string& io_path) {
  auto io = read_npz(io_path);
  std::vector<HostTensor> outputs = module.execute_host(io_inputs(io));
  std::vector<size_t> users = module.user_output_indices();
  ASSERT_FALSE(users.empty());
  for (size_t k = 0; k < users.size(); ++k) {
    auto c = closeness(outputs[users[k]], io.at("output_" + std::to_string(k)));
    ASSERT_TRUE(c.same_shape) << "output_" << k;
    EXPECT_GE(c.cosine, 0.9999) << "output_" << k;
    EXPECT_LE(c.max_abs, 1e-3) << "output_" << k;
  }
}

TEST(ParseInputSpec, ThreeShapes) {
  InputSpec s = parse_input_spec("x=1x3x16x16:4x3x16x16:8x3x16x16");
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.min, (std::vector<int64_t>{1, 3, 16, 16}));
  EXPECT_EQ(s.opt, (std::vector<int64_t>{4, 3, 16, 16}));
  EXPECT_EQ(s.max, (std::vector<int64_t>{8, 3, 16, 16}));
}

TEST(ParseInputSpec, OneShapeIsFixed) {
  InputSpec s = parse_input_spec("tokens=2x128");
  EXPECT_EQ(s.min, s.max);
  EXPECT_EQ(s.opt, (std::vector<int64_t>{2, 128}));
}

TEST(ParseInputSpec, RejectsMalformed) {
  for (const char* bad : {"x", "=1x2", "x=1x", "x=1:2", "x=axb", "x=4:2:8", "x=1x2:1x2x3:1x2", "x=-1"}) {
    EXPECT_THROW(parse_input_spec(bad), Error) << bad;
  }
}

TEST(Compile, EverythingInPyTorchWhenNoSegmentIsBigEnough) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  CompilationSettings settings;
  settings.min_block_size = 1000000;
  CompileReport report;
  auto module = compile(program, settings, {}, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->summary().engine_segments, 0u);
  EXPECT_TRUE(module->engines().empty());
  EXPECT_GT(report.torch_nodes, 0u);
  EXPECT_EQ(report.engine_nodes, 0u);
  ASSERT_GE(report.phases.size(), 3u);
  EXPECT_EQ(report.phases[0].first, "lowering");
  expect_matches_io(*module, fixture("tiny_mlp", "io_0.npz"));
  expect_matches_io(*module, fixture("tiny_mlp", "io_1.npz"));
}

TEST(Compile, LeavesTheProgramUnchanged) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  size_t nodes = program.graph->num_nodes();
  CompilationSettings settings;
  settings.dryrun = true;
  CompileReport report;
  EXPECT_EQ(compile(program, settings, {}, &report), nullptr);
  EXPECT_EQ(program.graph->num_nodes(), nodes);
  EXPECT_GT(report.engine_nodes + report.torch_nodes, 0u);
}

// A converter that fails on demand, registered in front of the built-in relu/gelu/linear converters.
std::atomic<bool> g_fail_conversion{false};

void register_failing_converters() {
  static bool done = false;
  if (done) return;
  done = true;
  for (const char* key : {"aten.linear.default", "aten.addmm.default", "aten.mm.default", "aten.gelu.default"}) {
    conversion::RegistrationOptions options;
    options.priority = conversion::Priority::High;
    options.supports_dynamic_shapes = true;
    options.capability_validator = [](const ir::Node&, const CompilationSettings&) {
      return g_fail_conversion.load();
    };
    options.registry_name = "compile_test_failing";
    conversion::converters().register_converter(
        key,
        [](conversion::ConversionContext&, const ir::Node& node, const conversion::ConverterArgs&)
            -> std::vector<engine::Tensor*> { KILN_FAIL(Unsupported, "test converter refuses ", node.name()); },
        options);
  }
}

struct FailGuard {
  FailGuard() { g_fail_conversion = true; }
  ~FailGuard() { g_fail_conversion = false; }
};

TEST(Compile, FailedSegmentFallsBackToPyTorch) {
  register_failing_converters();
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  CompilationSettings settings;
  settings.min_block_size = 1;
  FailGuard guard;
  CompileReport report;
  auto module = compile(program, settings, {}, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(report.fallbacks.empty());
  EXPECT_EQ(module->summary().engine_segments, module->engines().size());
  for (const ir::Node* node : module->graph().nodes()) {
    if (ir::is_engine_segment(*node)) continue;
    EXPECT_EQ(node->subgraph(), nullptr);
  }
  expect_matches_io(*module, fixture("tiny_mlp", "io_0.npz"));
}

TEST(Compile, PassThroughBuildFailuresStopsTheCompile) {
  register_failing_converters();
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  CompilationSettings settings;
  settings.min_block_size = 1;
  settings.pass_through_build_failures = true;
  FailGuard guard;
  EXPECT_THROW(compile(program, settings), Error);
}

TEST(Compile, InputSpecOutsideTheExportedRangeIsAnError) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  ASSERT_FALSE(program.user_inputs().empty());
  const std::string name = program.user_inputs()[0]->name();
  CompilationSettings settings;
  settings.dryrun = true;
  EXPECT_THROW(compile(program, settings, {parse_input_spec(name + "=1x33:2x33:3x33")}), Error);  // static dim 32
  EXPECT_THROW(compile(program, settings, {parse_input_spec("nope=1x32")}), Error);
  EXPECT_THROW(compile(program, settings, {parse_input_spec(name + "=1x32x1")}), Error);  // rank
}

TEST(Compile, InputSpecNarrowsTheRange) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  const std::string name = program.user_inputs()[0]->name();
  CompilationSettings settings;
  settings.min_block_size = 1000000;  // PyTorch only: checks the range bookkeeping without converters
  auto module = compile(program, settings, {parse_input_spec(name + "=2x32:5x32:8x32")});
  ASSERT_NE(module, nullptr);
  EXPECT_NO_THROW(module->execute_host({testing_util::random_floats({5, 32}, 1)}));
  EXPECT_THROW(module->execute_host({testing_util::random_floats({9, 32}, 2)}), Error);
  EXPECT_THROW(module->execute_host({testing_util::random_floats({1, 32}, 3)}), Error);
}

}  // namespace
}  // namespace kiln::compiler

namespace kiln::compiler {
namespace {

TEST(Compile, CudaGraphsSettingReachesTheModuleAndItsArchive) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  CompilationSettings settings;
  settings.min_block_size = 1;
  auto plain = compile(program, settings);
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(plain->use_cuda_graphs());
  EXPECT_FALSE(runtime::load_from_bytes(runtime::save_to_bytes(*plain), "plain")->use_cuda_graphs());
  settings.use_cuda_graphs = true;
  auto module = compile(program, settings);
  ASSERT_NE(module, nullptr);
  ASSERT_GT(module->summary().engine_segments, 0u);
  EXPECT_TRUE(module->use_cuda_graphs());
  // On the cpu backend the setting is kept (a .kiln carries it) but engines run plainly, with the same results.
  expect_matches_io(*module, fixture("tiny_mlp", "io_0.npz"));
  expect_matches_io(*module, fixture("tiny_mlp", "io_1.npz"));
  auto loaded = runtime::load_from_bytes(runtime::save_to_bytes(*module), "graphs");
  EXPECT_TRUE(loaded->use_cuda_graphs());
  expect_matches_io(*loaded, fixture("tiny_mlp", "io_0.npz"));
  loaded->set_use_cuda_graphs(false);
  EXPECT_FALSE(loaded->use_cuda_graphs());
  expect_matches_io(*loaded, fixture("tiny_mlp", "io_1.npz"));
  EXPECT_EQ(loaded->cuda_graph_engines(), 0u) << "the cpu backend has no graphs";
}

// threads: the builder's pool (tactics timed on it), the module's engines in process and after a save and load,
// and the engine-cache key (a cached engine of another thread count is not reused); a negative count is refused.
TEST(Compile, ThreadsSettingSizesTheEnginesAndTheirArchive) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  CompilationSettings settings;
  settings.min_block_size = 1;
  settings.threads = 1;
  auto one = compile(program, settings);
  ASSERT_NE(one, nullptr);
  ASSERT_GT(one->summary().engine_segments, 0u);
  EXPECT_EQ(kiln::testing::first_engine_threads(*one), "1t");
  EXPECT_EQ(one->engines().at(0).plan->device().substr(one->engines().at(0).plan->device().rfind(' ') + 1), "1t");
  auto loaded = runtime::load_from_bytes(runtime::save_to_bytes(*one), "one");
  EXPECT_EQ(kiln::testing::first_engine_threads(*loaded), "1t");
  expect_matches_io(*loaded, fixture("tiny_mlp", "io_0.npz"));
  settings.threads = 3;
  EXPECT_EQ(kiln::testing::first_engine_threads(*compile(program, settings)), "3t");
  EXPECT_NE(settings::engine_invariant_key(settings), settings::engine_invariant_key(CompilationSettings{}));
  settings.threads = -2;
  try {
    compile(program, settings);
    ADD_FAILURE() << "a negative thread count compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("threads: -2 is not in [0, 1024]"), std::string::npos) << e.what();
  }
}

// static_shape_cuda_graphs (default true) reaches the module and its archive; an archive without the key (written
// before the setting) takes the default, one with a non-boolean is refused.
TEST(Compile, StaticShapeCudaGraphsSettingReachesTheModuleAndItsArchive) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  CompilationSettings settings;
  settings.min_block_size = 1;
  auto module = compile(program, settings);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(module->static_shape_cuda_graphs());
  EXPECT_TRUE(runtime::load_from_bytes(runtime::save_to_bytes(*module), "default")->static_shape_cuda_graphs());
  settings.static_shape_cuda_graphs = false;
  auto off = compile(program, settings);
  ASSERT_NE(off, nullptr);
  EXPECT_FALSE(off->static_shape_cuda_graphs());
  auto loaded = runtime::load_from_bytes(runtime::save_to_bytes(*off), "off");
  EXPECT_FALSE(loaded->static_shape_cuda_graphs());
  expect_matches_io(*loaded, fixture("tiny_mlp", "io_0.npz"));
  EXPECT_EQ(loaded->cuda_graph_engines(), 0u);
}

// The program's call spec (what the Python package calls and returns with) reaches the module and its
// archive; a module without one saves and loads without one.
TEST(Compile, CallSpecReachesTheModuleAndItsArchive) {
  frontend::Program program = frontend::load_program(fixture("tiny_mlp"));
  ASSERT_FALSE(program.in_spec.empty());
  CompilationSettings settings;
  settings.min_block_size = 1000;  // no engines needed here
  auto module = compile(program, settings);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->call_spec().in_spec, program.in_spec);
  EXPECT_EQ(module->call_spec().out_spec, program.out_spec);
  auto loaded = runtime::load_from_bytes(runtime::save_to_bytes(*module), "spec");
  EXPECT_EQ(loaded->call_spec().in_spec, program.in_spec);
  EXPECT_EQ(loaded->call_spec().out_spec, program.out_spec);
  module->set_call_spec({});
  EXPECT_TRUE(runtime::load_from_bytes(runtime::save_to_bytes(*module), "none")->call_spec().in_spec.empty());
}

TEST(CompilationSettingsJson, RoundTripsTf32AndCudaGraphs) {
  CompilationSettings s;
  s.allow_tf32 = true;
  s.use_cuda_graphs = true;
  nlohmann::json j = settings::settings_to_json(s);
  CompilationSettings back = settings::settings_from_json(j);
  EXPECT_TRUE(back.allow_tf32);
  EXPECT_TRUE(back.use_cuda_graphs);
  // Settings saved before these existed read as off.
  j.erase("allow_tf32");
  j.erase("use_cuda_graphs");
  back = settings::settings_from_json(j);
  EXPECT_FALSE(back.allow_tf32);
  EXPECT_FALSE(back.use_cuda_graphs);
  j["allow_tf32"] = "yes";
  EXPECT_THROW(settings::settings_from_json(j), Error);
}

TEST(CompilationSettings, AllowTf32ReachesTheBuilderConfig) {
  CompilationSettings s;
  EXPECT_FALSE(conversion::builder_config_from_settings(s).allow_tf32);
  s.allow_tf32 = true;
  EXPECT_TRUE(conversion::builder_config_from_settings(s).allow_tf32);
}

// How the module will run its engines reaches the builder, whose tactic contests count the host's enqueue time
// for engines that run without CUDA graphs.
TEST(CompilationSettings, CudaGraphSettingsReachTheBuilderConfig) {
  CompilationSettings s;
  engine::BuilderConfig c = conversion::builder_config_from_settings(s);
  EXPECT_TRUE(c.graphs_for_static);
  EXPECT_FALSE(c.graphs_for_dynamic);
  s.use_cuda_graphs = true;
  c = conversion::builder_config_from_settings(s);
  EXPECT_TRUE(c.graphs_for_static && c.graphs_for_dynamic);
  s.use_cuda_graphs = s.static_shape_cuda_graphs = false;  // --no-cuda-graphs
  c = conversion::builder_config_from_settings(s);
  EXPECT_FALSE(c.graphs_for_static || c.graphs_for_dynamic);
}

TEST(CompilationSettings, TheAccuracyBarReachesTheBuilderConfig) {
  CompilationSettings s;
  EXPECT_EQ(conversion::builder_config_from_settings(s).min_output_cosine, engine::BuilderConfig{}.min_output_cosine);
  s.reduced_precision_min_cosine = 0.99999;
  EXPECT_EQ(conversion::builder_config_from_settings(s).min_output_cosine, 0.99999);
}

}  // namespace
}  // namespace kiln::compiler
