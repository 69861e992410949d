// Plan serialization corner cases: layers with more inputs or outputs than a shape has dims, and a plan loaded
// stripped that is serialized again before its refit (an engine cache entry re-saved).

#include <cstring>
#include <functional>

#include "engine/core/plan_impl.h"
#include "engine_test_util.h"
#include "kiln/engine/plan.h"
#include "kiln/engine/refitter.h"

namespace kiln::engine {
namespace {
using namespace testing;

// A concat of 12 inputs (more than kMaxRank tensor ids in one list) survives a round trip; outputs bit-identical.
TEST(EnginePlanSerialization, LayersWithManyTensorsRoundTrip) {
  std::mt19937 rng(71);
  Network net;
  std::vector<Tensor*> parts;
  std::map<std::string, HostTensor> inputs;
  for (int i = 0; i < 12; ++i) {
    const std::string name = "x" + std::to_string(i);
    parts.push_back(net.add_input(name, DType::Float32, {2, 3}));
    inputs[name] = random_tensor(DType::Float32, {2, 3}, rng);
  }
  Tensor* y = net.add_concat("cat", parts, 1);
  y = net.add_activation("relu", y, ActivationKind::Relu);
  net.mark_output(y);
  auto plan = build(net);
  auto loaded = Plan::deserialize(plan->serialize());
  HostTensor want = run(plan, inputs)[0];
  HostTensor got = run(loaded, inputs)[0];
  ASSERT_EQ(got.sizes(), (std::vector<int64_t>{2, 36}));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
}

// Loaded without its weights, serialized again (still stripped), loaded again, refitted: the outputs of the
// original build, bit-identical.
TEST(EnginePlanSerialization, StrippedPlanReserializesBeforeItsRefit) {
  std::mt19937 rng(72);
  HostTensor w = random_tensor(DType::Float32, {6, 4}, rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {3, 6});
  Tensor* y = net.add_matrix_multiply("fc", x, false, net.add_constant("w", Weights("fc.weight", w)), false);
  net.mark_output(net.add_activation("tanh", y, ActivationKind::Tanh));
  BuilderConfig config;
  config.refittable = true;
  auto plan = build(net, config);
  HostTensor input = random_tensor(DType::Float32, {3, 6}, rng);
  HostTensor want = run(plan, {{"x", input}})[0];

  auto weightless = Plan::deserialize(plan->serialize(/*strip_weights=*/true));
  EXPECT_TRUE(weightless->weights_missing());
  auto again = Plan::deserialize(weightless->serialize());
  EXPECT_TRUE(again->weights_missing());
  Refitter refitter(again);
  EXPECT_EQ(refitter.missing_weights(), std::vector<std::string>{"fc.weight"});
  refitter.set_weights("fc.weight", w);
  refitter.refit();
  HostTensor got = run(again, {{"x", input}})[0];
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
  // Written again, the same bytes (a stripped slot is written as its refit entry says).
  EXPECT_EQ(Plan::deserialize(weightless->serialize())->serialize(), weightless->serialize());
  // Told to keep its weights from now on, it serializes them.
  again->set_strip_weights(false);
  EXPECT_FALSE(Plan::deserialize(again->serialize())->weights_missing());
}

// A refit entry that names other dims or another name than its slot's weight (found by the plan fuzzer: such a
// plan loaded, and written again stripped took the entry's dims, so it did not serialize the same twice) is
// InvalidInput. (Written stripped, other dims are what the file says the weight is: the refit checks them.)
TEST(EnginePlanSerialization, RefitEntryThatDisagreesWithItsWeightIsInvalidInput) {
  std::mt19937 rng(73);
  HostTensor w = random_tensor(DType::Float32, {6, 4}, rng);
  struct Case {
    std::function<void(RefitEntry&)> edit;
    bool strip;
  };
  const Case cases[] = {
      {[](RefitEntry& e) { e.original_dims = {6, 5}; }, false},
      {[](RefitEntry& e) { e.name = "other.weight"; }, false},
      {[](RefitEntry& e) { e.name = "other.weight"; }, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.strip);
    Network net;
    Tensor* x = net.add_input("x", DType::Float32, {3, 6});
    net.mark_output(
        net.add_matrix_multiply("fc", x, false, net.add_constant("w", Weights("fc.weight", w)), false));
    BuilderConfig config;
    config.refittable = true;
    auto plan = build(net, config);
    ASSERT_EQ(plan->impl().refit.size(), 1u);
    c.edit(plan->impl().refit[0]);
    try {
      Plan::deserialize(plan->serialize(c.strip));
      ADD_FAILURE() << "loaded";
    } catch (const kiln::Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
      EXPECT_NE(std::string(e.what()).find("disagrees"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln::engine
