// The reference semantics of FusedPointwise programs that mix Float32 and Bool (the oracle the kernels are
// checked against): each instruction's dtype, selects, casts that round as storing does. Exact values.

#include <gtest/gtest.h>

#include <cmath>

#include "engine/ops/reference.h"
#include "engine/ops/shape_inference.h"
#include "engine/pointwise_programs.h"
#include "kiln/engine/layers.h"
#include "kiln/support/error.h"

namespace kiln::engine {
namespace {

using namespace testing::programs;

TEST(FusedPointwiseReference, MixedProgramsYieldTheirLastInstructionsDtype) {
  const Layer compare =
      fused({ew(ElementwiseOp::Greater, kIn, kW)}, {Weights(HostTensor::from_floats({1.0f}, {}))});
  EXPECT_EQ(infer_shapes(compare, {{DType::Float32, {4}, nullptr}}).at(0).dtype, DType::Bool);
  const Layer where = fused({select(kIn, kW, kIn + 1)}, {Weights(HostTensor::from_floats({1.0f}, {}))});
  const auto out =
      infer_shapes(where, {{DType::Bool, {3, 1}, nullptr}, {DType::Float32, {5}, nullptr}}).at(0);
  EXPECT_EQ(out.dtype, DType::Float32);
  EXPECT_EQ(out.dims, (Dims{3, 5}));
  const Layer bad = fused({instr(LayerKind::Select, 0, {kIn, kIn})}, {});
  EXPECT_THROW(infer_shapes(bad, {{DType::Bool, {4}, nullptr}}), Error);  // a select of 2 operands
}

TEST(FusedPointwiseReference, SelectAndCastsInOneProgram) {
  // c = x > 1; m = float(c) * x; y = where(c, m, -7) + float(bool(x * 0.5)): casts to Bool give 1 for every
  // nonzero (0.25, NaN), -0.0 gives 0.
  const Layer l = fused(
      {ew(ElementwiseOp::Greater, kIn, kW), cast(DType::Float32, kT), ew(ElementwiseOp::Mul, kT + 1, kIn),
       select(kT, kT + 2, kW + 1), ew(ElementwiseOp::Mul, kIn, kW + 2), cast(DType::Bool, kT + 4),
       cast(DType::Float32, kT + 5), ew(ElementwiseOp::Add, kT + 3, kT + 6)},
      {Weights(HostTensor::from_floats({1.0f}, {})), Weights(HostTensor::from_floats({-7.0f}, {})),
       Weights(HostTensor::from_floats({0.5f}, {}))});
  std::vector<float> x = {1.5f, -0.0f, std::nanf(""), 3.0f, 0.5f, -2.0f}, y(6, 0.0f);
  KernelArgs args;
  args.inputs.push_back(TensorView{x.data(), DType::Float32, {6}});
  args.outputs.push_back(TensorView{y.data(), DType::Float32, {6}});
  ops::execute(l, args);
  const std::vector<float> want = {2.5f, -7.0f, -6.0f, 4.0f, -6.0f, -6.0f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y[i], want[i]) << i;
}

}  // namespace
}  // namespace kiln::engine
