#include "kiln/frontend/program.h"
#include "kiln/frontend/op_schema.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "frontend/archive_edit.h"
#include "kiln/support/error.h"

namespace kiln::frontend {
namespace {

using testing::ArchiveEntries;
using testing::fixture_path;

std::map<std::string, int> op_histogram(const ir::Graph& g) {
  std::map<std::string, int> out;
  for (const ir::Node* n : g.nodes()) out[n->target().to_string()]++;
  return out;
}

const ir::Value* constant_by_fqn(const ir::Graph& g, const std::string& fqn) {
  for (const ir::Value* c : g.constants()) {
    if (c->fqn() == fqn) return c;
  }
  return nullptr;
}

const ir::Node* first_node(const ir::Graph& g, const std::string& op) {
  for (const ir::Node* n : g.nodes()) {
    if (n->target().to_string() == op) return n;
  }
  return nullptr;
}

std::vector<std::string> arg_names(const ir::Node& n) {
  std::vector<std::string> out;
  for (const auto& a : n.args()) out.push_back(a.name);
  return out;
}

TEST(LoadProgramTest, TinyConvnet) {
  Program p = load_program(fixture_path("tiny_convnet"));
  const ir::Graph& g = *p.graph;
  EXPECT_EQ(p.schema_major, 8);
  EXPECT_GE(p.schema_minor, 0);
  EXPECT_EQ(p.torch_version.substr(0, 4), "2.11");
  EXPECT_EQ(g.num_nodes(), 7u);
  EXPECT_EQ(g.constants().size(), 9u);
  ASSERT_EQ(g.inputs().size(), 1u);
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(p.output_kinds, (std::vector<OutputKind>{OutputKind::UserOutput, OutputKind::UserOutput}));
  // conv 8*3*3*3 + 8, bn 8 + 8, fc 4*8 + 4 (buffers are not parameters).
  EXPECT_EQ(p.parameter_count(), 276);
  // 276 parameters + 2*8 running stats in f32, and one i64 num_batches_tracked.
  EXPECT_EQ(p.constant_bytes(), (276 + 16) * 4 + 8);

  const ir::Value* x = g.inputs()[0];
  EXPECT_EQ(x->name(), "x");
  EXPECT_EQ(x->meta().dtype, DType::Float32);
  ASSERT_EQ(x->meta().rank(), 4);
  EXPECT_EQ(x->meta().sizes[0].symbol_name(), "s77");
  EXPECT_EQ(x->meta().sizes[1].as_int(), 3);
  ASSERT_TRUE(g.symbol_ranges().count("s77"));
  EXPECT_EQ(g.symbol_ranges().at("s77"), (ir::SymRange{1, 64}));
  EXPECT_EQ(g.symbol_hints().at("s77"), 2);

  // Weights: shapes, dtypes and values read back from the archive's storage.
  const ir::Value* w = constant_by_fqn(g, "conv.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->constant_kind(), ir::ConstantKind::Parameter);
  EXPECT_EQ(w->data().sizes(), (std::vector<int64_t>{8, 3, 3, 3}));
  const ir::Value* var = constant_by_fqn(g, "bn.running_var");
  ASSERT_NE(var, nullptr);
  EXPECT_EQ(var->constant_kind(), ir::ConstantKind::Buffer);
  // Exact: the bytes are copied, not computed (value from the fixture's weight_7, first float).
  EXPECT_FLOAT_EQ(var->data().data_as<float>()[0], 1.8665260076522827f);
  for (int64_t i = 0; i < var->data().numel(); ++i) EXPECT_GT(var->data().get_as_double(i), 0.0);
  const ir::Value* bias = constant_by_fqn(g, "conv.bias");
  EXPECT_FLOAT_EQ(bias->data().data_as<float>()[0], -0.150535449385643f);
  const ir::Value* tracked = constant_by_fqn(g, "bn.num_batches_tracked");
  ASSERT_NE(tracked, nullptr);
  EXPECT_EQ(tracked->data().dtype(), DType::Int64);
  EXPECT_TRUE(tracked->data().sizes().empty());

  // Defaults filled: conv2d gets bias/stride/padding (given) and dilation/groups (defaults), in order.
  const ir::Node* conv = first_node(g, "aten.conv2d.default");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(arg_names(*conv),
            (std::vector<std::string>{"input", "weight", "bias", "stride", "padding", "dilation", "groups"}));
  EXPECT_EQ(conv->arg("dilation").as_ints(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(conv->arg("groups").as_int(), 1);
  EXPECT_EQ(conv->arg("input").as_tensor(), x);
  EXPECT_EQ(conv->arg("weight").as_tensor(), w);
  // Metadata kept.
  EXPECT_NE(conv->metadata().at("nn_module_stack").find("torch.nn.modules.conv.Conv2d"), std::string::npos);
  EXPECT_NE(conv->metadata().at("stack_trace").find("forward"), std::string::npos);
  EXPECT_TRUE(conv->metadata().count("torch_fn"));

  const ir::Node* mean = first_node(g, "aten.mean.dim");
  ASSERT_NE(mean, nullptr);
  EXPECT_EQ(arg_names(*mean), (std::vector<std::string>{"self", "dim", "keepdim", "dtype"}));
  EXPECT_FALSE(mean->arg("keepdim").as_bool());
  EXPECT_TRUE(mean->arg("dtype").is_none());
  EXPECT_TRUE(mean->args()[3].kwarg_only);
  // Node outputs carry the program's symbolic shapes.
  EXPECT_EQ(conv->output()->meta().sizes[0].symbol_name(), "s77");
  EXPECT_EQ(op_histogram(g).at("aten.lgamma.default"), 1);
}

TEST(LoadProgramTest, TinyConvnetCoreAten) {
  Program p = load_program(fixture_path("tiny_convnet", "model_core_aten.pt2"));
  const ir::Graph& g = *p.graph;
  EXPECT_EQ(g.num_nodes(), 8u);
  EXPECT_EQ(g.constants().size(), 9u);
  const ir::Node* bn = first_node(g, "aten._native_batch_norm_legit_no_training.default");
  ASSERT_NE(bn, nullptr);
  EXPECT_EQ(bn->outputs().size(), 3u);
  const ir::Node* conv = first_node(g, "aten.convolution.default");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->args().size(), 9u);
  EXPECT_FALSE(conv->arg("transposed").as_bool());
  const ir::Node* addmm = first_node(g, "aten.addmm.default");
  ASSERT_NE(addmm, nullptr);
  EXPECT_EQ(arg_names(*addmm), (std::vector<std::string>{"self", "mat1", "mat2", "beta", "alpha"}));
  EXPECT_EQ(addmm->arg("beta").as_int(), 1);
}

TEST(LoadProgramTest, TinyResnetBothForms) {
  for (const char* file : {"model.pt2", "model_core_aten.pt2"}) {
    Program p = load_program(fixture_path("tiny_resnet", file));
    const ir::Graph& g = *p.graph;
    EXPECT_EQ(g.constants().size(), 35u) << file;
    ASSERT_EQ(g.inputs().size(), 1u);
    EXPECT_TRUE(g.inputs()[0]->meta().is_static());
    EXPECT_EQ(*g.inputs()[0]->meta().static_sizes(), (std::vector<int64_t>{2, 3, 32, 32}));
    EXPECT_TRUE(g.symbol_ranges().empty());
    int parameters = 0, buffers = 0;
    for (const ir::Value* c : g.constants()) {
      (c->constant_kind() == ir::ConstantKind::Parameter ? parameters : buffers)++;
      EXPECT_TRUE(c->data().defined()) << c->fqn();
    }
    EXPECT_EQ(parameters, 20);
    EXPECT_EQ(buffers, 15);
    for (const ir::Value* c : g.constants()) {
      if (c->fqn().ends_with("running_var")) {
        for (int64_t i = 0; i < c->data().numel(); ++i) EXPECT_GT(c->data().get_as_double(i), 0.0) << c->fqn();
      }
    }
  }
  Program p = load_program(fixture_path("tiny_resnet"));
  EXPECT_EQ(p.graph->num_nodes(), 22u);
  auto ops = op_histogram(*p.graph);
  EXPECT_EQ(ops.at("aten.conv2d.default"), 6);
  EXPECT_EQ(ops.at("aten.batch_norm.default"), 5);
  const ir::Node* pool = first_node(*p.graph, "aten.max_pool2d.default");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(arg_names(*pool),
            (std::vector<std::string>{"self", "kernel_size", "stride", "padding", "dilation", "ceil_mode"}));
  EXPECT_EQ(pool->arg("dilation").as_ints(), (std::vector<int64_t>{1, 1}));
  EXPECT_FALSE(pool->arg("ceil_mode").as_bool());
  const ir::Node* flatten = first_node(*p.graph, "aten.flatten.using_ints");
  ASSERT_NE(flatten, nullptr);
  EXPECT_EQ(flatten->arg("end_dim").as_int(), -1);

  Program core = load_program(fixture_path("tiny_resnet", "model_core_aten.pt2"));
  EXPECT_EQ(core.graph->num_nodes(), 23u);
  const ir::Node* mp = first_node(*core.graph, "aten.max_pool2d_with_indices.default");
  ASSERT_NE(mp, nullptr);
  EXPECT_EQ(mp->outputs().size(), 2u);
}

TEST(LoadProgramTest, TinyEncoderSymbolicInts) {
  Program p = load_program(fixture_path("tiny_encoder"));
  const ir::Graph& g = *p.graph;
  EXPECT_EQ(g.num_nodes(), 39u);
  EXPECT_EQ(g.constants().size(), 12u);
  // in_proj 192x64+192, out_proj 64x64+64, linear1 128x64+128, linear2 64x128+64, two layer norms 2x(64+64).
  EXPECT_EQ(p.parameter_count(), 12480 + 4160 + 8320 + 8256 + 256);
  ASSERT_EQ(g.inputs().size(), 1u);
  const ir::TensorMeta& src = g.inputs()[0]->meta();
  ASSERT_EQ(src.rank(), 3);
  EXPECT_EQ(src.sizes[0].symbol_name(), "s28");
  EXPECT_EQ(src.sizes[1].symbol_name(), "s98");
  EXPECT_EQ(g.symbol_ranges().at("s28"), (ir::SymRange{1, 16}));
  EXPECT_EQ(g.symbol_ranges().at("s98"), (ir::SymRange{2, 64}));
  EXPECT_EQ(g.symbol_hints().at("s28"), 2);
  EXPECT_EQ(g.symbol_hints().at("s98"), 10);

  const ir::Value* size = g.find_value("sym_size_int_3");
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->kind(), ir::ValueKind::SymInt);
  ASSERT_TRUE(size->sym_value().has_value());
  EXPECT_EQ(size->sym_value()->symbol_name(), "s28");
  const ir::Value* mul = g.find_value("mul_3");
  ASSERT_NE(mul, nullptr);
  ASSERT_TRUE(mul->sym_value().has_value());
  EXPECT_EQ(mul->sym_value()->evaluate({{"s28", 5}}), 20);

  // _operator.mul is not in the table: its arguments stay as given.
  const ir::Node* mul_node = mul->producer();
  ASSERT_NE(mul_node, nullptr);
  EXPECT_EQ(mul_node->target().to_string(), "_operator.mul");
  EXPECT_EQ(mul_node->arg("a").as_sym_int().value, size);
  EXPECT_EQ(mul_node->arg("b").as_int(), 4);

  // view takes a mixed list of symbolic and constant sizes.
  const ir::Node* view = g.find_node("view");
  ASSERT_NE(view, nullptr);
  std::vector<ir::SymIntArg> dims = view->arg("size").as_sym_ints();
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_TRUE(dims[0].is_value());
  EXPECT_FALSE(dims[2].is_value());
  EXPECT_EQ(dims[2].constant, 16);

  const ir::Node* sdpa = first_node(g, "aten.scaled_dot_product_attention.default");
  ASSERT_NE(sdpa, nullptr);
  EXPECT_EQ(arg_names(*sdpa), (std::vector<std::string>{"query", "key", "value", "attn_mask", "dropout_p",
                                                         "is_causal", "scale", "enable_gqa"}));
  EXPECT_TRUE(sdpa->arg("attn_mask").is_none());
  EXPECT_FALSE(sdpa->arg("is_causal").as_bool());
}

TEST(LoadProgramTest, TinyMlp) {
  Program p = load_program(fixture_path("tiny_mlp"));
  const ir::Graph& g = *p.graph;
  EXPECT_EQ(g.num_nodes(), 6u);
  EXPECT_EQ(g.constants().size(), 8u);
  EXPECT_EQ(p.parameter_count(), 32 * 64 + 64 + 64 * 64 + 64 + 64 + 64 + 64 * 8 + 8);
  EXPECT_EQ(g.symbol_ranges().at("s77"), (ir::SymRange{1, 1024}));
  int tanh = 0, none = 0;
  for (const ir::Node* n : g.nodes()) {
    if (n->target().name != "gelu") continue;
    ASSERT_EQ(n->args().size(), 2u);
    EXPECT_TRUE(n->args()[1].kwarg_only);
    (n->arg("approximate").as_string() == "tanh" ? tanh : none)++;
  }
  EXPECT_EQ(tanh, 1);
  EXPECT_EQ(none, 1);
}

// The root call's pytree specs come through as torch.export wrote them (tiny_mlp: forward(x) -> tensor).
TEST(LoadProgramTest, KeepsTheCallSpec) {
  Program p = load_program(fixture_path("tiny_mlp"));
  const nlohmann::json in = nlohmann::json::parse(p.in_spec);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], 1);  // the treespec protocol
  EXPECT_EQ(in[1]["type"], "builtins.tuple");
  EXPECT_EQ(in[1]["children_spec"][0]["children_spec"].size(), 1u);  // one positional argument
  EXPECT_EQ(nlohmann::json::parse(p.out_spec)[1]["type"], nullptr);  // one tensor returned
}

TEST(LoadProgramTest, MissingFileIsAnError) {
  EXPECT_THROW(load_program("/nonexistent/dir/model.pt2"), Error);
}

// Rewrites tiny_convnet's weights config so that tensors share storage files as views.
TEST(LoadProgramTest, RebuildsViewsOfSharedStorage) {
  ArchiveEntries a = ArchiveEntries::read(fixture_path("tiny_convnet"));
  Program original = load_program(fixture_path("tiny_convnet"));
  const HostTensor& fc_w = constant_by_fqn(*original.graph, "fc.weight")->data();  // [4, 8], 32 floats

  auto config = nlohmann::json::parse(a.text("model_weights_config.json"));
  // fc.bias := fc.weight's storage, offset 3, stride 2: elements 3, 5, 7, 9.
  auto& bias = config["config"]["fc.bias"];
  bias["path_name"] = config["config"]["fc.weight"]["path_name"];
  bias["tensor_meta"]["storage_offset"] = {{"as_int", 3}};
  bias["tensor_meta"]["strides"] = nlohmann::json::array({{{"as_int", 2}}});
  a.set_text("model_weights_config.json", config.dump());
  Program p = load_program_from_bytes(a.zip(), "shared.pt2");
  const HostTensor& b = constant_by_fqn(*p.graph, "fc.bias")->data();
  ASSERT_EQ(b.sizes(), (std::vector<int64_t>{4}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.data_as<float>()[i], fc_w.data_as<float>()[3 + 2 * i]) << i;

  // fc.weight as a transposed view ([4, 8] with strides [1, 4]) of its own storage.
  config["config"]["fc.weight"]["tensor_meta"]["strides"] = nlohmann::json::array({{{"as_int", 1}}, {{"as_int", 4}}});
  a.set_text("model_weights_config.json", config.dump());
  Program t = load_program_from_bytes(a.zip(), "transposed.pt2");
  const HostTensor& tw = constant_by_fqn(*t.graph, "fc.weight")->data();
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 8; ++c) EXPECT_EQ(tw.data_as<float>()[r * 8 + c], fc_w.data_as<float>()[c * 4 + r]);
  }

  // A view reaching past the end of its storage is a clear error.
  bias["tensor_meta"]["storage_offset"] = {{"as_int", 30}};
  config["config"]["fc.bias"] = bias;
  a.set_text("model_weights_config.json", config.dump());
  try {
    load_program_from_bytes(a.zip(), "short.pt2");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("shorter than its metadata"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::frontend

namespace kiln::frontend {
namespace {

// Every aten op of every fixture is in the schema table, so every such node has all its arguments.
TEST(LoadProgramTest, FixtureOpsAreAllInTheSchemaTable) {
  for (const auto& [name, file] : std::vector<std::pair<std::string, std::string>>{
           {"tiny_convnet", "model.pt2"}, {"tiny_convnet", "model_core_aten.pt2"}, {"tiny_encoder", "model.pt2"},
           {"tiny_mlp", "model.pt2"}, {"tiny_resnet", "model.pt2"}, {"tiny_resnet", "model_core_aten.pt2"}}) {
    Program p = load_program(testing::fixture_path(name, file));
    for (const ir::Node* n : p.graph->nodes()) {
      if (n->target().is_python_operator()) continue;
      const OpSchema* schema = find_op_schema(n->target());
      ASSERT_NE(schema, nullptr) << name << "/" << file << ": " << n->target().to_string();
      ASSERT_EQ(n->args().size(), schema->arguments.size()) << n->name();
      for (size_t i = 0; i < n->args().size(); ++i) EXPECT_EQ(n->args()[i].name, schema->arguments[i].name);
      if (!schema->returns_list()) {
        EXPECT_EQ(n->outputs().size(), schema->num_returns()) << n->name();
      }
    }
  }
}

}  // namespace
}  // namespace kiln::frontend
