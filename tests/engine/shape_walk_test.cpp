// The per-layer step shared by the network, plan and execution-context shape walks
// (engine/core/shape_walk.h).

#include <gtest/gtest.h>

#include <numeric>

#include "engine/core/shape_walk.h"
#include "kiln/engine/network.h"

namespace kiln::engine {
namespace {

HostTensor int64s(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return HostTensor::from_int64s(v, {n});
}

TEST(ShapeWalk, NetworkKeepsHostValuesOfSmallIntegerTensorsOnly) {
  Network net;
  Tensor* small = net.add_constant("small", Weights(int64s(kMaxHostValueElements)));
  Tensor* large = net.add_constant("large", Weights(int64s(kMaxHostValueElements + 1)));
  Tensor* floats = net.add_constant("floats", Weights(HostTensor::from_floats({1.f, 2.f}, {2})));
  ASSERT_NE(net.known_value(small->id()), nullptr);
  EXPECT_EQ(net.known_value(large->id()), nullptr);
  EXPECT_EQ(net.known_value(floats->id()), nullptr);
  // A layer whose inputs all have values is folded: later layers see exact values.
  Tensor* sum = net.add_elementwise("sum", small, small, ElementwiseOp::Add);
  const HostTensor* v = net.known_value(sum->id());
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->get_as_double(3), 6.0);
}

// A layer the builder gave format copies (Layer::format_copies) has that many more outputs, each output 0's
// dims and dtype; a count that is negative, or copies of an output the layer does not have, is an error, and a
// network takes no layer with copies.
TEST(ShapeWalk, FormatCopiesTakeOutputZerosShape) {
  Layer l;
  l.name = "ln";
  l.kind = LayerKind::Normalization;
  l.params = NormalizationParams{};
  l.get<NormalizationParams>().axis = 1;
  std::vector<ShapeIn> in{{DType::Float16, {3, 8}, nullptr}};
  EXPECT_EQ(infer_layer_shapes(l, in).size(), 1u);
  l.format_copies = 2;
  const std::vector<ShapeOut> outs = infer_layer_shapes(l, in);
  ASSERT_EQ(outs.size(), 3u);
  for (const ShapeOut& o : outs) {
    EXPECT_EQ(o.dims, (Dims{3, 8}));
    EXPECT_EQ(o.dtype, DType::Float16);
  }
  l.format_copies = -1;
  EXPECT_THROW(infer_layer_shapes(l, in), Error);
  // Only the builder gives copies: a network refuses a layer that has them.
  Network net;
  l.inputs = {net.add_input("x", DType::Float16, {3, 8})->id()};
  l.format_copies = 1;
  EXPECT_THROW(net.add_layer(l), Error);
  l.format_copies = 0;
  EXPECT_NO_THROW(net.add_layer(l));
}

TEST(ShapeWalk, DataDependentDimsFollowTheGuess) {
  ShapeOut out{DType::Int64, {-1, 2}, true};
  std::vector<ShapeIn> in{{DType::Float32, {3, 4}, nullptr}};
  EXPECT_EQ(guessed_dims(out, in, DataDependentGuess::Max), (Dims{12, 2}));
  EXPECT_EQ(guessed_dims(out, in, DataDependentGuess::Min), (Dims{0, 2}));
  EXPECT_EQ(guessed_dims(out, in, DataDependentGuess::Unknown), (Dims{-1, 2}));
  in[0].dims = {3, -1};  // the input's size is unknown: nothing to guess from
  EXPECT_EQ(guessed_dims(out, in, DataDependentGuess::Max), (Dims{-1, 2}));
}

}  // namespace
}  // namespace kiln::engine
