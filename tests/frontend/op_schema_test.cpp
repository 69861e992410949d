#include "kiln/frontend/op_schema.h"

#include <gtest/gtest.h>

#include "kiln/support/error.h"

namespace kiln::frontend {
namespace {

TEST(OpSchemaTest, ParsesConv2dWithBroadcastListDefaults) {
  OpSchema s = parse_op_schema(
      "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, "
      "SymInt[2] dilation=1, SymInt groups=1) -> Tensor");
  EXPECT_EQ(s.op.to_string(), "aten.conv2d.default");
  ASSERT_EQ(s.arguments.size(), 7u);
  EXPECT_EQ(s.arguments[0].name, "input");
  EXPECT_FALSE(s.arguments[0].has_default());
  EXPECT_TRUE(s.arguments[2].is_optional());
  EXPECT_TRUE(s.arguments[2].default_value->is_none());
  EXPECT_EQ(s.arguments[3].type, "SymInt[2]");
  EXPECT_EQ(s.arguments[3].default_value->as_ints(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(s.arguments[4].default_value->as_ints(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(s.arguments[6].default_value->as_int(), 1);
  EXPECT_EQ(s.returns, (std::vector<std::string>{"Tensor"}));
  EXPECT_EQ(s.index_of("dilation"), 5);
  EXPECT_EQ(s.index_of("nope"), -1);
}

TEST(OpSchemaTest, ParsesKwargOnlyAliasesTuplesAndLists) {
  OpSchema s = parse_op_schema(
      "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]");
  EXPECT_EQ(s.arguments[0].type, "Tensor");
  EXPECT_TRUE(s.returns_list());
  EXPECT_EQ(s.returns, (std::vector<std::string>{"Tensor[]"}));

  OpSchema m = parse_op_schema("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  EXPECT_EQ(m.op.overload, "dim");
  EXPECT_EQ(m.num_returns(), 2u);
  EXPECT_FALSE(m.returns_list());
  EXPECT_FALSE(m.arguments[2].default_value->as_bool());

  OpSchema g = parse_op_schema("aten::gelu(Tensor self, *, str approximate='none') -> Tensor");
  EXPECT_TRUE(g.arguments[1].kwarg_only);
  EXPECT_FALSE(g.arguments[0].kwarg_only);
  EXPECT_EQ(g.arguments[1].default_value->as_string(), "none");

  OpSchema a = parse_op_schema("aten::_assert_scalar(Scalar self, str assert_msg) -> ()");
  EXPECT_EQ(a.num_returns(), 0u);

  OpSchema c = parse_op_schema(
      "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)");
  EXPECT_EQ(c.arguments[1].default_value->as_memory_format(), ir::MemoryFormat::Contiguous);

  OpSchema l = parse_op_schema("aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor");
  // Scalar defaults keep the literal's kind: 0.01 is a float, "alpha=1" an int.
  EXPECT_EQ(l.arguments[1].default_value->kind(), ir::Argument::Kind::Float);
  EXPECT_DOUBLE_EQ(l.arguments[1].default_value->as_float(), 0.01);

  OpSchema p = parse_op_schema(
      "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
      "bool ceil_mode=False) -> Tensor");
  EXPECT_TRUE(p.arguments[2].default_value->as_ints().empty());

  OpSchema e = parse_op_schema("aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor");
  EXPECT_TRUE(e.arguments[1].default_value->as_ints().empty());
  OpSchema h = parse_op_schema("aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor");
  EXPECT_EQ(h.arguments[1].default_value->as_int(), -1);
  OpSchema n = parse_op_schema("aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                               "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor");
  EXPECT_DOUBLE_EQ(n.arguments[4].default_value->as_float(), 1e-05);
  EXPECT_TRUE(n.arguments[5].default_value->as_bool());
}

TEST(OpSchemaTest, RoundTripsThroughToString) {
  for (const OpSchema& s : known_op_schemas()) {
    OpSchema again = parse_op_schema(s.to_string());
    EXPECT_EQ(again.op, s.op) << s.to_string();
    ASSERT_EQ(again.arguments.size(), s.arguments.size()) << s.to_string();
    for (size_t i = 0; i < s.arguments.size(); ++i) {
      EXPECT_EQ(again.arguments[i].name, s.arguments[i].name);
      EXPECT_EQ(again.arguments[i].kwarg_only, s.arguments[i].kwarg_only);
      EXPECT_EQ(again.arguments[i].has_default(), s.arguments[i].has_default()) << s.to_string();
    }
    EXPECT_EQ(again.returns, s.returns);
  }
}

TEST(OpSchemaTest, RejectsMalformedSchemas) {
  for (const char* bad : {"", "conv2d(Tensor x) -> Tensor", "aten::f(Tensor x", "aten::f(Tensor) -> Tensor",
                          "aten::f(int x=abc) -> Tensor", "aten::f(Tensor x) ->", "aten::f(int[2 x) -> Tensor",
                          "aten::f(bool b=Maybe) -> Tensor", "aten::f(int x=None) -> Tensor"}) {
    EXPECT_THROW(parse_op_schema(bad), Error) << bad;
  }
}

TEST(OpSchemaTest, TableCoversTheOpsKilnKnows) {
  // The table parses (a bad entry would throw here) and holds the ops later layers rely on.
  EXPECT_GT(known_op_schemas().size(), 150u);
  for (const char* name :
       {"aten.conv2d.default", "aten.convolution.default", "aten.batch_norm.default",
        "aten._native_batch_norm_legit_no_training.default", "aten.layer_norm.default", "aten.linear.default",
        "aten.addmm.default", "aten.scaled_dot_product_attention.default", "aten.squeeze.dims",
        "aten.max_pool2d_with_indices.default", "aten.upsample_bilinear2d.vec", "aten.to.dtype_layout",
        "aten.arange.start_step", "aten.split_with_sizes.default", "aten.sym_size.int", "aten.log_softmax.int",
        "aten._log_softmax.default", "aten.mean.dim", "aten.sum.dim_IntList", "aten.slice.Tensor",
        "aten.select.int", "aten.hardtanh.default", "aten.leaky_relu.default", "aten.where.self"}) {
    EXPECT_NE(find_op_schema(ir::OpName::parse(name)), nullptr) << name;
  }
  EXPECT_EQ(find_op_schema(ir::OpName::parse("aten.lgamma.default"))->num_returns(), 1u);
  EXPECT_EQ(find_op_schema(ir::OpName::parse("_operator.mul")), nullptr);
  EXPECT_EQ(find_op_schema(ir::OpName::parse("aten.not_an_op.default")), nullptr);
  const OpSchema* sdpa = find_op_schema(ir::OpName::parse("aten.scaled_dot_product_attention.default"));
  EXPECT_TRUE(sdpa->find_argument("scale")->kwarg_only);
  EXPECT_DOUBLE_EQ(sdpa->find_argument("dropout_p")->default_value->as_float(), 0.0);
}

TEST(OpSchemaTest, NormalizeOrdersAndFillsDefaults) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ir::ValueKind::Tensor, ir::TensorMeta::make(DType::Float32, {1, 3, 8, 8}));
  ir::Value* w = g.add_input("w", ir::ValueKind::Tensor, ir::TensorMeta::make(DType::Float32, {4, 3, 3, 3}));
  // Given out of order, with padding and without bias/stride/dilation/groups.
  ir::Node* n = g.create_node(ir::OpName::parse("aten.conv2d.default"),
                              {{"padding", ir::Argument::ints({1, 1}), false},
                               {"weight", ir::Argument::tensor(w), false},
                               {"input", ir::Argument::tensor(x), false}},
                              {ir::OutputSpec{"y", ir::ValueKind::Tensor, {}}});
  ASSERT_TRUE(fill_default_arguments(*n));
  ASSERT_EQ(n->args().size(), 7u);
  std::vector<std::string> names;
  for (const auto& a : n->args()) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"input", "weight", "bias", "stride", "padding", "dilation", "groups"}));
  EXPECT_EQ(n->arg("input").as_tensor(), x);
  EXPECT_TRUE(n->arg("bias").is_none());
  EXPECT_EQ(n->arg("padding").as_ints(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(n->arg("dilation").as_ints(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(n->arg("groups").as_int(), 1);

  // A positional argument named after another overload's parameter binds by position (export writes
  // dropout(self=...) when it functionalizes dropout_); a keyword argument never does.
  ir::Node* drop = g.create_node(ir::OpName::parse("aten.dropout.default"),
                                 {{"self", ir::Argument::tensor(x), false}, {"p", ir::Argument::float_(0.2), false},
                                  {"train", ir::Argument::bool_(false), false}},
                                 {ir::OutputSpec{"d", ir::ValueKind::Tensor, {}}});
  ASSERT_TRUE(fill_default_arguments(*drop));
  EXPECT_EQ(drop->arg("input").as_tensor(), x);
  EXPECT_EQ(drop->args().size(), 3u);
  ir::Node* keyword = g.create_node(ir::OpName::parse("aten.dropout.default"),
                                    {{"self", ir::Argument::tensor(x), true}, {"p", ir::Argument::float_(0.2), false},
                                     {"train", ir::Argument::bool_(false), false}},
                                    {ir::OutputSpec{"k", ir::ValueKind::Tensor, {}}});
  EXPECT_THROW(fill_default_arguments(*keyword), Error);

  // A missing required argument is an error naming it.
  ir::Node* bad = g.create_node(ir::OpName::parse("aten.relu.default"), {},
                                {ir::OutputSpec{"r", ir::ValueKind::Tensor, {}}});
  try {
    fill_default_arguments(*bad);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("'self'"), std::string::npos) << e.what();
  }

  // Unknown ops are left alone.
  ir::Node* other = g.create_node(ir::OpName::parse("aten.some_new_op.default"), {{"z", ir::Argument::int_(3), true}},
                                  {ir::OutputSpec{"o", ir::ValueKind::Tensor, {}}});
  EXPECT_FALSE(fill_default_arguments(*other));
  ASSERT_EQ(other->args().size(), 1u);
  EXPECT_TRUE(other->args()[0].kwarg_only);
}

}  // namespace
}  // namespace kiln::frontend
