#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

TEST(EngineSmoke, AddRelu) {
  std::mt19937 rng(1);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 3});
  Tensor* y = net.add_input("y", DType::Float32, {2, 3});
  Tensor* s = net.add_elementwise("add", x, y, ElementwiseOp::Add);
  Tensor* r = net.add_activation("relu", s, ActivationKind::Relu);
  r->set_name("out");
  net.mark_output(r);
  auto plan = build(net);
  HostTensor a = random_tensor(DType::Float32, {2, 3}, rng), b = random_tensor(DType::Float32, {2, 3}, rng);
  auto outs = run(plan, {{"x", a}, {"y", b}});
  std::vector<double> want;
  for (int i = 0; i < 6; ++i) want.push_back(std::max(0.0, (double)(a.data_as<float>()[i] + b.data_as<float>()[i])));
  expect_close(outs[0], want, 1e-6, 1e-6, "add+relu");
}

}  // namespace
}  // namespace kiln::engine
