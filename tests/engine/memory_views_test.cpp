// The memory plan's views: a Shuffle that only reshapes shares its input's arena buffer (its kernel copies
// nothing), while a transposing one gets a buffer of its own, and a producer whose output is viewed keeps its
// buffer alive for every consumer of the view and of itself. Runs on $KILN_TEST_BACKEND (cpu by default; the
// gpu ctest runs it on cuda).

#include "engine/core/plan_impl.h"
#include "engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// The (input, output) tensor ids of the n-th Shuffle layer of the plan.
std::pair<int64_t, int64_t> shuffle_tensors(const Plan& plan, int nth) {
  for (const auto& pl : plan.impl().layers) {
    if (pl.layer.kind == LayerKind::Shuffle && nth-- == 0) return {pl.layer.inputs[0], pl.layer.outputs[0]};
  }
  ADD_FAILURE() << "no such shuffle layer";
  return {-1, -1};
}

TEST(EngineMemoryViews, ReshapeSharesItsInputBufferTransposeDoesNot) {
  std::mt19937 rng(71);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 3, 8});
  Tensor* e = net.add_unary("exp", x, UnaryOp::Exp);
  Tensor* r = net.add_shuffle("flatten", e, ShuffleParams{{}, true, {6, 8}, {}});
  HostTensor w = random_tensor(DType::Float32, {8, 5}, rng);
  Tensor* y = net.add_matrix_multiply("mm", r, false, net.add_constant("w", w), false);
  Tensor* t =
      net.add_shuffle("transpose", e, ShuffleParams{{0, 2, 1}, false, {}, {}});  // e outlives the view
  net.mark_output(y);
  net.mark_output(t);
  BuilderConfig config;
  config.backend = test_backend();
  std::shared_ptr<Plan> plan;
  try {
    plan = build(net, config);
  } catch (const Error& e) {
    GTEST_SKIP() << "backend " << config.backend << " unavailable: " << e.what();
  }
  const auto& offsets = plan->impl().profiles[0].offsets;
  auto [rin, rout] = shuffle_tensors(*plan, 0);
  ASSERT_GE(rin, 0);
  EXPECT_GE(offsets[rin], 0);
  EXPECT_EQ(offsets[rout], offsets[rin]) << "the reshape is a view of its input";

  HostTensor xi = random_tensor(DType::Float32, {2, 3, 8}, rng, -1.0, 1.0);
  auto out = run(plan, {{"x", xi}});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> want_y(6 * 5, 0.0), want_t(2 * 8 * 3);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t k = 0; k < 8; ++k)
        want_y[i * 5 + j] += std::exp(xi.get_as_double(i * 8 + k)) * w.get_as_double(k * 5 + j);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 8; ++c)
      for (int64_t s = 0; s < 3; ++s)
        want_t[(b * 8 + c) * 3 + s] = std::exp(xi.get_as_double((b * 3 + s) * 8 + c));
  // fp32 exp (a few ulps) and 8-term fp32 sums of products of magnitude <= 3: 1e-5 relative, 1e-6 absolute.
  expect_close(out[0], want_y, 1e-5, 1e-6, "matmul of the view");
  expect_close(out[1], want_t, 1e-5, 1e-6, "transpose of the viewed tensor");
}

// ViT's batch-first transposes at batch 1, [1, L, E] -> [L, 1, E], move only a dim of size 1: the builder
// makes them reshapes, which share their input's buffer. A transpose that also swaps two larger dims stays a
// copy.
TEST(EngineMemoryViews, TransposeOfUnitDimsIsAView) {
  std::mt19937 rng(72);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, 5, 8});
  Tensor* e = net.add_unary("exp", x, UnaryOp::Exp);
  Tensor* t = net.add_shuffle("batch_first", e, ShuffleParams{{1, 0, 2}, false, {}, {}});
  Tensor* u = net.add_shuffle("swap", e, ShuffleParams{{2, 0, 1}, false, {}, {}});
  net.mark_output(net.add_unary("t_exp", t, UnaryOp::Exp));
  net.mark_output(net.add_unary("u_exp", u, UnaryOp::Exp));
  BuilderConfig config;
  config.backend = test_backend();
  std::shared_ptr<Plan> plan;
  try {
    plan = build(net, config);
  } catch (const Error& err) {
    GTEST_SKIP() << "backend " << config.backend << " unavailable: " << err.what();
  }
  const auto& offsets = plan->impl().profiles[0].offsets;
  auto [tin, tout] = shuffle_tensors(*plan, 0);
  auto [uin, uout] = shuffle_tensors(*plan, 1);
  ASSERT_GE(tin, 0);
  ASSERT_GE(uin, 0);
  EXPECT_EQ(offsets[tout], offsets[tin]) << "the unit-dim transpose is a view of its input";
  EXPECT_NE(offsets[uout], offsets[uin]) << "a transpose of larger dims copies";

  HostTensor xi = random_tensor(DType::Float32, {1, 5, 8}, rng, -1.0, 1.0);
  auto out = run(plan, {{"x", xi}});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> want_t(40), want_u(40);
  for (int64_t l = 0; l < 5; ++l)
    for (int64_t c = 0; c < 8; ++c) {
      const double v = std::exp(std::exp(xi.get_as_double(l * 8 + c)));
      want_t[l * 8 + c] = v;  // [5, 1, 8]: the same order
      want_u[c * 5 + l] = v;  // [8, 1, 5]
    }
  // Two fp32 exps (a few ulps each) of values up to e: 1e-5 relative, 1e-6 absolute.
  expect_close(out[0], want_t, 1e-5, 1e-6, "unit-dim transpose");
  expect_close(out[1], want_u, 1e-5, 1e-6, "transpose of larger dims");
}

}  // namespace
}  // namespace kiln::engine
