// Operator names: the canonical spelling that registry keys and op sets compare by (parsing: graph_test.cpp).

#include "kiln/ir/op_name.h"

#include <gtest/gtest.h>

namespace kiln::ir {
namespace {

TEST(OpName, CanonicalNameSpellsOperatorNamespaceWithUnderscore) {
  EXPECT_EQ(canonical_op_name(OpName{"aten", "add", "Tensor"}), "aten.add.Tensor");
  EXPECT_EQ(canonical_op_name(OpName{"operator", "getitem", ""}), "_operator.getitem");
  EXPECT_EQ(canonical_op_packet(OpName{"operator", "getitem", ""}), "_operator.getitem");
  EXPECT_EQ(canonical_op_packet(OpName{"aten", "add", "Tensor"}), "aten.add");
  EXPECT_EQ(canonical_op_namespace("operator"), "_operator");
  EXPECT_EQ(canonical_op_namespace("prims"), "prims");
}

TEST(OpName, NormalizesUserSpellings) {
  EXPECT_EQ(normalize_op_spelling("torch.ops.aten.add.Tensor"), "aten.add.Tensor");
  EXPECT_EQ(normalize_op_spelling("aten::add.Tensor"), "aten.add.Tensor");
  EXPECT_EQ(normalize_op_spelling("operator.getitem"), "_operator.getitem");
}

TEST(OpName, OpInSetMatchesOverloadOrPacketInAnySpelling) {
  const OpName add{"aten", "add", "Tensor"};
  EXPECT_TRUE(op_in_set(add, {"aten.add.Tensor"}));
  EXPECT_TRUE(op_in_set(add, {"aten.add"}));
  EXPECT_TRUE(op_in_set(add, {"torch.ops.aten.add.Tensor"}));
  EXPECT_TRUE(op_in_set(add, {"aten::add.Tensor"}));
  EXPECT_FALSE(op_in_set(add, {"aten.add.Scalar"}));
  EXPECT_FALSE(op_in_set(add, {"aten.addmm"}));
  EXPECT_FALSE(op_in_set(add, {}));
  EXPECT_TRUE(op_in_set(OpName{"operator", "getitem", ""}, {"operator.getitem"}));
}

}  // namespace
}  // namespace kiln::ir
