#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Reshapes move no data: exact (rtol 1e-5, atol 1e-6).
TEST(CanonicalizeViews, StaticFormsBecomeReshape) {
  auto pass = make_canonicalize_views_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3, 4]) {
  %f: f32[2, 12] = aten.flatten.using_ints(self=%x, start_dim=1, end_dim=-1)
  %v: f32[24] = aten.view.default(self=%f, size=[24])
  %u: f32[4, 6] = aten.unflatten.int(self=%v, dim=0, sizes=[4, 6])
  return (%u)
})", R"(graph(%x: f32[2, 3, 4]) {
  %reshape: f32[2, 12] = aten.reshape.default(self=%x, shape=[2, 12])
  %reshape_1: f32[24] = aten.reshape.default(self=%x, shape=[24])
  %reshape_2: f32[4, 6] = aten.reshape.default(self=%x, shape=[4, 6])
  return (%reshape_2)
})");
}

TEST(CanonicalizeViews, DynamicFlattenUsesSymSize) {
  auto pass = make_canonicalize_views_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[s0, 3, 4]) {
  symbol s0 in [1, 16] hint 5
  %f: f32[s0, 12] = aten.flatten.using_ints(self=%x, start_dim=1, end_dim=-1)
  return (%f)
})", R"(graph(%x: f32[s0, 3, 4]) {
  symbol s0 in [1, 16] hint 5
  %sym_size_int: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)
  %reshape: f32[s0, 12] = aten.reshape.default(self=%x, shape=[%sym_size_int, 12])
  return (%reshape)
})");
}

}  // namespace
}  // namespace kiln::lowering
