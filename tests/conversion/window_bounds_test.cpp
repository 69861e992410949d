// Window arguments far outside what the engine's convolution and pooling kernels are built for (a stride of 2^31,
// legal in torch) make the converter's validator refuse the node, so it runs in PyTorch: issue 23 found such a
// convolution compiled into garbage.

#include <gtest/gtest.h>

#include "kiln/conversion/registry.h"
#include "kiln/ir/text.h"

namespace kiln::conversion {
namespace {

const ir::Node& last_node(const ir::Graph& g) {
  const ir::Node* last = nullptr;
  for (const ir::Node* n : g.nodes()) last = n;
  return *last;
}

bool converts(const std::string& call, const std::string& out) {
  auto g = ir::parse_graph("graph(%x: f32[1, 4, 9, 9]) {\n  %w: f32[6, 4, 3, 3] = parameter(\"conv.weight\")\n  %y: " +
                           out + " = " + call + "\n  return (%y)\n}\n");
  return converters().lookup(last_node(*g), settings::CompilationSettings{}).match.has_value();
}

TEST(WindowBounds, HugeStridesAndPaddingRunInPyTorch) {
  const std::string conv = "aten.conv2d.default(input=%x, weight=%w, bias=None, stride=[";
  EXPECT_TRUE(converts(conv + "2, 2], padding=[1, 1], dilation=[1, 1], groups=1)", "f32[1, 6, 5, 5]"));
  EXPECT_FALSE(converts(conv + "2147483648, 1], padding=[1, 1], dilation=[1, 1], groups=1)", "f32[1, 6, 1, 9]"));
  EXPECT_FALSE(converts(conv + "1, 1], padding=[1, 4294967296], dilation=[1, 1], groups=1)", "f32[1, 6, 9, 9]"));
  const std::string pool = "aten.max_pool2d.default(self=%x, kernel_size=[2, 2], stride=[";
  EXPECT_TRUE(converts(pool + "2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=False)", "f32[1, 4, 4, 4]"));
  EXPECT_FALSE(converts(pool + "2147483648, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=False)", "f32[1, 4, 1, 4]"));
}

}  // namespace
}  // namespace kiln::conversion
