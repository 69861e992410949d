// The vectorized reduce kernel against the reference.
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5): sums are reassociated into 16 float partial sums (the
// reference sums in double); for at most a few hundred O(1) values the difference is ~1e-6 relative.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

OneLayer reduce_layer(ReduceOp op, std::vector<int64_t> axes, bool keep) {
  OneLayer l;
  l.layer.name = "reduce";
  l.layer.kind = LayerKind::Reduce;
  ReduceParams p;
  p.op = op;
  p.axes = std::move(axes);
  p.keep_dims = keep;
  l.layer.params = p;
  return l;
}

TEST(VecReduce, SumMeanMaxMinOverConsecutiveAxes) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
    std::string what = reduce_op_name(op);
    check_against_reference(reduce_layer(op, {2, 3}, true), "vec", {{2, 3, 7, 9}}, {{{2, 3, 7, 9}}, {{1, 5, 4, 4}}},
                            1e-4, 1e-5, what + " over H, W");
    check_against_reference(reduce_layer(op, {1}, false), "vec", {{2, 6, 5, 3}}, {{{2, 6, 5, 3}}}, 1e-4, 1e-5,
                            what + " over C");
    check_against_reference(reduce_layer(op, {2}, false), "vec", {{4, 3, 77}}, {{{4, 3, 77}}}, 1e-4, 1e-5,
                            what + " over last");
  }
}

TEST(VecReduce, DoesNotApplyToSplitAxesOrProd) {
  OneLayer split = reduce_layer(ReduceOp::Sum, {0, 2}, false);
  EXPECT_FALSE(row(LayerKind::Reduce, "vec").runs(split.info({{2, 3, 4}}), nullptr));
  OneLayer prod = reduce_layer(ReduceOp::Prod, {1}, false);
  EXPECT_FALSE(row(LayerKind::Reduce, "vec").runs(prod.info({{2, 3, 4}}), nullptr));
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
