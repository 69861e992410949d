// Facts about mask values proved from the ops that made them (kiln/ir/attention_mask_facts.h): index ramps
// through unsqueeze and expand, lower bounds, all-true values and AND factors, on small graphs.

#include <gtest/gtest.h>

#include "kiln/ir/attention_mask_facts.h"
#include "kiln/ir/text.h"

namespace kiln::ir {
namespace {

constexpr const char* kGraph = R"(graph(%x: i64[1, 5], %b: bool[2, 1, 1, 5]) {
  %ar: i64[5] = aten.arange.default(end=5, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %plus3: i64[5] = aten.add.Tensor(self=%ar, other=3, *, alpha=1)
  %row: i64[1, 5] = aten.unsqueeze.default(self=%plus3, dim=0)
  %col: i64[5, 1] = aten.unsqueeze.default(self=%plus3, dim=1)
  %wide: i64[4, 5, 1] = aten.expand.default(self=%col, size=[4, 5, 1], *, implicit=False)
  %one: i64[1] = aten.arange.default(end=1, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %spread: i64[5] = aten.expand.default(self=%one, size=[5], *, implicit=False)
  %step2: i64[3] = aten.arange.start_step(start=0, end=5, step=2, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %in: i64[1, 5] = aten.add.Tensor(self=%x, other=0, *, alpha=1)
  %ge: bool[5, 1] = aten.ge.Scalar(self=%col, other=3)
  %gt: bool[5, 1] = aten.gt.Scalar(self=%col, other=3)
  %full: bool[] = aten.full.default(size=[], fill_value=1, *, dtype=dtype.bool, layout=None, device=None, pin_memory=None)
  %t: bool[5, 1] = aten.__and__.Tensor(self=%full, other=%ge)
  %m: bool[2, 1, 5, 5] = aten.__and__.Tensor(self=%t, other=%b)
  %e: bool[2, 1, 5, 5] = aten.expand.default(self=%m, size=[2, 1, 5, 5], *, implicit=False)
  return (%row, %wide, %spread, %step2, %in, %gt, %e)
})";

class AttentionMaskFacts : public ::testing::Test {
 protected:
  std::unique_ptr<Graph> g = parse_graph(kGraph);
  Value& v(const std::string& name) { return *g->find_value(name); }
};

TEST_F(AttentionMaskFacts, IndexRampsFollowUnsqueezeAndExpand) {
  ASSERT_TRUE(index_ramp(v("plus3")));
  EXPECT_EQ(index_ramp(v("plus3"))->offset, 3);
  EXPECT_EQ(index_ramp(v("row"))->dim, -1);  // inserted before the ramp's dim
  EXPECT_EQ(index_ramp(v("col"))->dim, -2);  // inserted after it
  EXPECT_EQ(index_ramp(v("wide"))->dim, -2);
  EXPECT_FALSE(index_ramp(v("spread")));  // a size-1 ramp broadcast: the same value everywhere
  EXPECT_FALSE(index_ramp(v("step2")));   // step 2
  EXPECT_FALSE(index_ramp(v("in")));      // an input
}

TEST_F(AttentionMaskFacts, LowerBoundsAndAllTrue) {
  EXPECT_EQ(int64_lower_bound(v("wide")), 3);
  EXPECT_EQ(int64_lower_bound(v("step2")), 0);
  EXPECT_FALSE(int64_lower_bound(v("in")));
  EXPECT_TRUE(provably_all_true(v("ge")));   // x + 3 >= 3
  EXPECT_FALSE(provably_all_true(v("gt")));  // x + 3 > 3 fails at x = 0
  EXPECT_TRUE(provably_all_true(v("t")));
  EXPECT_FALSE(provably_all_true(v("b")));
}

TEST_F(AttentionMaskFacts, AndFactorsLookThroughExpands) {
  const std::vector<const Value*> factors = and_factors(v("e"));
  ASSERT_EQ(factors.size(), 3u);
  EXPECT_EQ(factors[0]->name(), "full");
  EXPECT_EQ(factors[1]->name(), "ge");
  EXPECT_EQ(factors[2]->name(), "b");
}

}  // namespace
}  // namespace kiln::ir
