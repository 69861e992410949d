// Argument checks (kiln/frontend/op_checks.h) on one-node IR graphs: the cases issue 23 found (libtorch refused or
// crashed on them while the compiled module computed garbage or ignored the argument, exit 0) are refused with
// InvalidInput naming the argument; the valid forms next to them pass.

#include "kiln/frontend/op_checks.h"

#include <gtest/gtest.h>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"

namespace kiln::frontend {
namespace {

/// Parses "graph(INPUTS) { BODY return (%y) }" and checks its last node.
void check(const std::string& inputs, const std::string& body) {
  auto g = ir::parse_graph("graph(" + inputs + ") {\n" + body + "\n  return (%y)\n}\n");
  const ir::Node* last = nullptr;
  for (const ir::Node* n : g->nodes()) last = n;
  ASSERT_NE(last, nullptr);
  check_node_arguments(*last);
}

void expect_ok(const std::string& inputs, const std::string& body) {
  EXPECT_NO_THROW(check(inputs, body)) << body;
}

void expect_refused(const std::string& inputs, const std::string& body, const std::string& needle) {
  try {
    check(inputs, body);
    ADD_FAILURE() << "accepted: " << body;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node '"), std::string::npos) << e.what();
  }
}

const char* kImage = "%x: f32[2, 4, 9, 9]";
std::string conv(const std::string& w, const std::string& args) {
  return "  %w: " + w + " = parameter(\"conv.weight\")\n  %y: f32[2, 6, 9, 9] = aten.conv2d.default(input=%x, "
         "weight=%w, bias=None, " + args + ")";
}

TEST(OpChecks, Convolution) {
  const std::string ok = "stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=1";
  expect_ok(kImage, conv("f32[6, 4, 3, 3]", ok));
  expect_ok(kImage, conv("f32[6, 2, 3, 3]", "stride=[2], padding=[1, 1], dilation=[1, 1], groups=2"));
  expect_refused(kImage, conv("f32[6, 4, 3, 3]", "stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=4611686018427387904"),
                 "'groups'");
  expect_refused(kImage, conv("f32[6, 4, 3, 3]", "stride=[], padding=[1, 1], dilation=[1, 1], groups=1"), "'stride'");
  expect_refused(kImage, conv("f32[6, 4, 3, 3]", "stride=[0, 1], padding=[1, 1], dilation=[1, 1], groups=1"), "'stride'");
  expect_refused(kImage, conv("f32[6, 4, 3, 3]", "stride=[1, 1], padding=[-1, 1], dilation=[1, 1], groups=1"),
                 "'padding'");
  expect_refused(kImage, conv("f32[6, 4, 3, 3]", "stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=0"), "'groups'");
  expect_refused(kImage, conv("f32[6, 4, 3, 3]", "stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=-2"),
                 "'groups'");
  expect_refused(kImage, conv("f32[6, 4, 3, 3]", "stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=4"), "'groups'");
  expect_refused(kImage, conv("f16[6, 4, 3, 3]", ok), "f16");
  expect_refused(kImage, conv("f32[6, 3, 3, 3]", ok), "channels");
  expect_refused(kImage, conv("f32[6, 4, 13, 13]", "stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1"),
                 "dilated kernel");
}

TEST(OpChecks, ShapesAndDims) {
  const char* x = "%x: f32[2, 3, 4]";
  expect_ok(x, "  %y: f32[4, 2, 3] = aten.permute.default(self=%x, dims=[2, 0, 1])");
  expect_refused(x, "  %y: f32[4, 2, 3] = aten.permute.default(self=%x, dims=[])", "'dims'");
  expect_refused(x, "  %y: f32[4, 2, 3] = aten.permute.default(self=%x, dims=[2, 0, 0])", "more than once");
  expect_refused(x, "  %y: f32[4, 2, 3] = aten.permute.default(self=%x, dims=[3, 0, 1])", "out of range");
  expect_ok(x, "  %y: f32[2, 12] = aten.flatten.using_ints(self=%x, start_dim=1, end_dim=-1)");
  expect_refused(x, "  %y: f32[24] = aten.flatten.using_ints(self=%x, start_dim=5, end_dim=-1)", "'start_dim'");
  expect_refused(x, "  %y: f32[24] = aten.flatten.using_ints(self=%x, start_dim=2, end_dim=1)", "comes after");
  expect_ok(x, "  %y: f32[6, 4] = aten.view.default(self=%x, size=[-1, 4])");
  expect_refused(x, "  %y: f32[5, 5] = aten.view.default(self=%x, size=[5, 5])", "24 elements");
  expect_refused(x, "  %y: f32[6, 4] = aten.view.default(self=%x, size=[-1, -1])", "-1");
  expect_refused(x, "  %y: f32[6, 4] = aten.reshape.default(self=%x, shape=[-2, 12])", "invalid size");
  expect_ok(x, "  %y: f32[2, 3] = aten.sum.dim_IntList(self=%x, dim=[-1], keepdim=False)");
  expect_refused(x, "  %y: f32[2] = aten.sum.dim_IntList(self=%x, dim=[1, -2], keepdim=False)", "more than once");
  expect_refused(x, "  %y: f32[2, 3, 4] = aten._log_softmax.default(self=%x, dim=3, half_to_float=False)", "'dim'");
  expect_ok(x, "  %y: f32[2, 3, 4, 1] = aten.unsqueeze.default(self=%x, dim=3)");
  expect_refused(x, "  %y: f32[2, 3, 4, 1] = aten.unsqueeze.default(self=%x, dim=4)", "'dim'");
}

TEST(OpChecks, NormalizationDropoutAndFactories) {
  const char* x = "%x: f32[2, 3, 8]";
  expect_ok(x, "  %y: f32[2, 3, 8] = aten.layer_norm.default(input=%x, normalized_shape=[8], weight=None, bias=None, "
               "eps=1e-05, cudnn_enable=True)");
  expect_refused(x, "  %y: f32[2, 3, 8] = aten.layer_norm.default(input=%x, normalized_shape=[4], weight=None, "
                    "bias=None, eps=1e-05, cudnn_enable=True)", "'normalized_shape'");
  expect_refused(x, "  %y: f32[2, 3, 8] = aten.layer_norm.default(input=%x, normalized_shape=[8], weight=None, "
                    "bias=None, eps=\"1e-5\", cudnn_enable=True)", "'eps'");
  expect_refused(x, "  %w: f32[4] = parameter(\"ln.weight\")\n  %y: f32[2, 3, 8] = aten.layer_norm.default(input=%x, "
                    "normalized_shape=[8], weight=%w, bias=None, eps=1e-05, cudnn_enable=True)", "'weight'");
  expect_ok(x, "  %y: f32[2, 3, 8] = aten.dropout.default(input=%x, p=0.5, train=False)");
  expect_refused(x, "  %y: f32[2, 3, 8] = aten.dropout.default(input=%x, p=1.5, train=False)", "'p'");
  expect_refused(x, "  %y: f32[2, 3, 8] = aten.gelu.default(self=%x, *, approximate=1)", "'approximate'");
  expect_refused("", "  %y: f32[2] = aten.empty.memory_format(size=[-1], dtype=None, layout=None, device=None, "
                     "pin_memory=None, memory_format=None)", "negative dimension");
  expect_refused("", "  %y: f32[2] = aten.randn.default(size=[2.5], dtype=None, layout=None, device=None, "
                     "pin_memory=None)", "'size'");
}

TEST(OpChecks, MatmulDtypesAndDeclaredOutputs) {
  expect_ok("%x: f32[3, 8]", "  %w: f32[5, 8] = parameter(\"fc.weight\")\n  %y: f32[3, 5] = aten.linear.default("
                             "input=%x, weight=%w, bias=None)");
  expect_refused("%x: f32[3, 8]", "  %w: f16[5, 8] = parameter(\"fc.weight\")\n  %y: f32[3, 5] = aten.linear.default("
                                  "input=%x, weight=%w, bias=None)", "f16");
  expect_refused("%x: f32[3, 8]", "  %w: f32[5, 7] = parameter(\"fc.weight\")\n  %y: f32[3, 5] = aten.linear.default("
                                  "input=%x, weight=%w, bias=None)", "inner dimensions");
  expect_refused("%x: f32[3, 8]", "  %y: f32[3, 8], %z: f32[3, 8] = aten.relu.default(self=%x)", "declares 2 outputs");
}

}  // namespace
}  // namespace kiln::frontend
