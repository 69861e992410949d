// lower_quantize_dequantize: PT2E quantize/dequantize nodes and fake quantization brought to the forms the
// converters take, with torch's arithmetic. libtorch 1.13 has no quantized_decomposed ops, so the graphs
// before the pass are checked against the arithmetic written out here (quantize_params.h) and the graphs
// after it run in libtorch (aten.fake_quantize_* and elementwise ops).

#include <cmath>
#include <limits>

#include "kiln/ir/int8_weight_scales.h"
#include "kiln/lowering/passes.h"
#include "kiln/support/error.h"
#include "lowering/lowering_test_util.h"
#include "lowering/passes/quantize_params.h"

namespace kiln::lowering {
namespace {

testing::PassCheck structural() {
  testing::PassCheck check;
  check.numeric = false;  // (the graphs before the pass hold ops libtorch 1.13 lacks)
  return check;
}

TEST(LowerQuantizeDequantize, DequantizedInt8WeightsBecomeExactFp32Constants) {
  auto pass = make_lower_quantize_dequantize_pass();
  testing::PassCheck check = structural();
  check.print.constant_values = true;
  // w = q * scale per output channel (axis 0); 0.1f * 3 rounds once, as torch's fp32 product does.
  testing::expect_pass(*pass, R"(graph(%x: f32[1, 2, 1, 1]) {
  %q: i8[2, 2, 1, 1] = parameter("w_int8", data=[3, -127, 127, 0])
  %s: f32[2] = buffer("scales", data=[0.1, 0.25])
  %z: i64[2] = buffer("zero_points", data=[0, 0])
  %w: f32[2, 2, 1, 1] = quantized_decomposed.dequantize_per_channel.default(input=%q, scales=%s, zero_points=%z, axis=0, quant_min=-127, quant_max=127, dtype=dtype.i8, *, out_dtype=None)
  %y: f32[1, 2, 1, 1] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  return (%y)
})",
                       R"(graph(%x: f32[1, 2, 1, 1]) {
  %w_folded: f32[2, 2, 1, 1] = constant("w_folded", data=[0.3, -12.7, 31.75, 0.0])
  %y: f32[1, 2, 1, 1] = aten.convolution.default(input=%x, weight=%w_folded, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  return (%y)
})",
                       check);
}

TEST(LowerQuantizeDequantize, TheReadersOfFoldedInt8WeightsCarryTheirScales) {
  auto pass = make_lower_quantize_dequantize_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[1, 2, 1, 1]) {
  %q: i8[2, 2, 1, 1] = parameter("w_int8", data=[3, -128, 127, 0])
  %s: f32[2] = buffer("scales", data=[0.1, 0.25])
  %z: i64[2] = buffer("zero_points", data=[0, 0])
  %w: f32[2, 2, 1, 1] = quantized_decomposed.dequantize_per_channel.default(input=%q, scales=%s, zero_points=%z, axis=0, quant_min=-128, quant_max=127, dtype=dtype.i8, *, out_dtype=None)
  %y: f32[1, 2, 1, 1] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  return (%y)
})");
  ASSERT_TRUE(pass->run(*g, {}));
  const ir::Node* conv = g->nodes().back();
  const auto& meta = conv->metadata();
  auto it = meta.find(std::string(ir::kInt8WeightScalesKeyPrefix) + "w_folded");
  ASSERT_NE(it, meta.end()) << ir::print_graph(*g);
  EXPECT_EQ(ir::parse_int8_weight_scales(it->second), (std::vector<float>{0.1f, 0.25f})) << it->second;
  EXPECT_EQ(ir::format_int8_weight_scales({0.1f, 3e-7f, 1.0f}), "0.1 3e-07 1");
  // ModelOpt-style: fake-quantized fp32 weights within int8's bounds carry their scales too.
  auto fq = ir::parse_graph(R"(graph(%x: f32[1, 2]) {
  %w: f32[3, 2] = parameter("w", data=[0.3, -0.2, 0.1, 0.5, 1.0, 2.0])
  %s: f32[3] = buffer("s", data=[0.01, 0.02, 0.5])
  %z: i32[3] = buffer("z", data=[0, 0, 0])
  %fw: f32[3, 2] = aten.fake_quantize_per_channel_affine.default(self=%w, scale=%s, zero_point=%z, axis=0, quant_min=-127, quant_max=127)
  %y: f32[1, 3] = aten.linear.default(input=%x, weight=%fw, bias=None)
  return (%y)
})");
  ASSERT_TRUE(pass->run(*fq, {}));
  const auto& linear_meta = fq->nodes().back()->metadata();
  auto at = linear_meta.find(std::string(ir::kInt8WeightScalesKeyPrefix) + "fw_folded");
  ASSERT_NE(at, linear_meta.end()) << ir::print_graph(*fq);
  EXPECT_EQ(at->second, "0.01 0.02 0.5");
  EXPECT_FALSE(ir::parse_int8_weight_scales("0.1 x").has_value());
}

TEST(LowerQuantizeDequantize, AQuantizeDequantizePairBecomesOneFakeQuantization) {
  auto pass = make_lower_quantize_dequantize_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 8]) {
  %q: u8[2, 8] = quantized_decomposed.quantize_per_tensor.default(input=%x, scale=0.05, zero_point=0, quant_min=0, quant_max=255, dtype=dtype.u8)
  %d: f32[2, 8] = quantized_decomposed.dequantize_per_tensor.default(input=%q, scale=0.05, zero_point=0, quant_min=0, quant_max=255, dtype=dtype.u8, *, out_dtype=None)
  %y: f32[2, 8] = aten.relu.default(self=%d)
  return (%y)
})",
                       R"(graph(%x: f32[2, 8]) {
  %d_1: f32[2, 8] = aten.fake_quantize_per_tensor_affine.default(self=%x, scale=0.05, zero_point=0, quant_min=0, quant_max=255)
  %y: f32[2, 8] = aten.relu.default(self=%d_1)
  return (%y)
})",
                       structural());
}

TEST(LowerQuantizeDequantize, PairsWithOtherParametersStaySeparateAndBecomeArithmetic) {
  // The dequantize's scale is not the quantize's: no pair; each is torch's arithmetic.
  auto pass = make_lower_quantize_dequantize_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[4]) {
  %q: i8[4] = quantized_decomposed.quantize_per_tensor.default(input=%x, scale=0.5, zero_point=3, quant_min=-128, quant_max=127, dtype=dtype.i8)
  %d: f32[4] = quantized_decomposed.dequantize_per_tensor.default(input=%q, scale=0.25, zero_point=3, quant_min=-128, quant_max=127, dtype=dtype.i8, *, out_dtype=None)
  return (%d)
})");
  ASSERT_TRUE(pass->run(*g, {}));
  ir::verify(*g);
  for (const ir::Node* n : g->nodes()) {
    EXPECT_EQ(n->target().ns, "aten") << ir::print_graph(*g);
    EXPECT_EQ(n->target().name.find("fake_quantize"), std::string::npos) << ir::print_graph(*g);
  }
#ifdef KILN_LOWERING_HAVE_REFERENCE
  // Values around ties and the clamp: x = 0.25 -> 0.5 -> round half even 0 (+3 = 3) -> (3 - 3) * 0.25 = 0.
  const std::vector<float> xs = {0.25f, 0.75f, -70.0f, 70.0f};
  const auto out = runtime::run_in_libtorch(*g, {HostTensor::from_floats(xs, {4})});
  for (size_t i = 0; i < xs.size(); ++i) {
    const float q = detail::quantize_value(xs[i], 0.5, 3, -128, 127);
    EXPECT_EQ(out[0].get_as_double(static_cast<int64_t>(i)), detail::dequantize_value(q, 0.25, 3)) << xs[i];
  }
#endif
}

TEST(LowerQuantizeDequantize, StandaloneQuantizeAndDequantizeMatchTorchArithmetic) {
  // A quantize whose integers are a graph output, and a dequantize of a computed int8 tensor.
  auto pass = make_lower_quantize_dequantize_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[2, 3], %i: i8[2, 3]) {
  %q: i8[2, 3] = quantized_decomposed.quantize_per_tensor.default(input=%x, scale=0.1, zero_point=-2, quant_min=-128, quant_max=127, dtype=dtype.i8)
  %d: f32[2, 3] = quantized_decomposed.dequantize_per_tensor.default(input=%i, scale=0.1, zero_point=-2, quant_min=-128, quant_max=127, dtype=dtype.i8, *, out_dtype=None)
  return (%q, %d)
})");
  ASSERT_TRUE(pass->run(*g, {}));
  ir::verify(*g);
#ifdef KILN_LOWERING_HAVE_REFERENCE
  const std::vector<float> xs = {0.05f, -0.15f, 12.9f, -13.0f, 0.35f, 100.0f};
  HostTensor ints(DType::Int8, {2, 3});
  const std::vector<int> is = {-128, -2, 0, 5, 127, -3};
  for (int64_t k = 0; k < 6; ++k) ints.set_from_double(k, is[static_cast<size_t>(k)]);
  const auto out = runtime::run_in_libtorch(*g, {HostTensor::from_floats(xs, {2, 3}), ints});
  ASSERT_EQ(out[0].dtype(), DType::Int8);
  for (int64_t k = 0; k < 6; ++k) {
    EXPECT_EQ(out[0].get_as_double(k),
              detail::quantize_value(xs[static_cast<size_t>(k)], 0.1, -2, -128, 127));
    EXPECT_EQ(out[1].get_as_double(k), detail::dequantize_value(is[static_cast<size_t>(k)], 0.1, -2));
  }
#endif
}

TEST(LowerQuantizeDequantize, FakeQuantizedConstantsFoldAndCachemaskFormsBecomePlain) {
  auto pass = make_lower_quantize_dequantize_pass();
  testing::PassCheck check = structural();
  check.print.constant_values = true;
  // round(0.26 / 0.1) = 3 -> 0.3; round(-1 / 0.1) = -10 clamped to -8 -> -0.8.
  testing::expect_pass(*pass, R"(graph(%x: f32[2]) {
  %w: f32[2] = parameter("w", data=[0.26, -1.0])
  %s: f32[2] = buffer("s", data=[0.1, 0.1])
  %z: i32[2] = buffer("z", data=[0, 0])
  %fw: f32[2] = aten.fake_quantize_per_channel_affine.default(self=%w, scale=%s, zero_point=%z, axis=0, quant_min=-8, quant_max=7)
  %fx: f32[2], %mask: bool[2] = aten.fake_quantize_per_tensor_affine_cachemask.default(self=%x, scale=0.5, zero_point=0, quant_min=-128, quant_max=127)
  %y: f32[2] = aten.mul.Tensor(self=%fx, other=%fw)
  return (%y)
})",
                       R"(graph(%x: f32[2]) {
  %fw_folded: f32[2] = constant("fw_folded", data=[0.30000001192092896, -0.800000011920929])
  %fx_1: f32[2] = aten.fake_quantize_per_tensor_affine.default(self=%x, scale=0.5, zero_point=0, quant_min=-128, quant_max=127)
  %y: f32[2] = aten.mul.Tensor(self=%fx_1, other=%fw_folded)
  return (%y)
})",
                       check);
}

// Parameters no quantization can use: one line naming the node, never a crash.
TEST(LowerQuantizeDequantize, BadParametersAreOneLineInvalidInput) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"scale=0.0, zero_point=0, quant_min=-128, quant_max=127", "is not a finite positive number"},
      {"scale=-0.5, zero_point=0, quant_min=-128, quant_max=127", "is not a finite positive number"},
      {"scale=nan, zero_point=0, quant_min=-128, quant_max=127", "is not a finite positive number"},
      {"scale=inf, zero_point=0, quant_min=-128, quant_max=127", "is not a finite positive number"},
      {"scale=1e-45, zero_point=0, quant_min=-128, quant_max=127", "is not a finite positive number"},
      {"scale=0.5, zero_point=0, quant_min=10, quant_max=-10", "quant_min 10 > quant_max -10"},
      {"scale=0.5, zero_point=0, quant_min=-300, quant_max=127", "outside i8's range"},
      {"scale=0.5, zero_point=200, quant_min=-128, quant_max=127", "zero point 200 is outside"},
  };
  for (const auto& [params, message] : cases) {
    auto g = ir::parse_graph(
        "graph(%x: f32[4]) {\n  %q: i8[4] = quantized_decomposed.quantize_per_tensor.default(input=%x, " +
        params + ", dtype=dtype.i8)\n  return (%q)\n}");
    auto pass = make_lower_quantize_dequantize_pass();
    try {
      pass->run(*g, {});
      ADD_FAILURE() << "no error for " << params;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << params;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("q (quantized_decomposed.quantize_per_tensor"), std::string::npos)
          << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST(LowerQuantizeDequantize, MismatchedPerChannelParametersAreOneLineInvalidInput) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"%s: f32[3] = buffer(\"s\", data=[0.1, 0.1, 0.1])\n  %z: i64[2] = buffer(\"z\", data=[0, 0])\n",
       "3 scales for axis 0 of size 2"},
      {"%s: f32[2] = buffer(\"s\", data=[0.1, 0.1])\n  %z: i64[5] = buffer(\"z\", data=[0, 0, 0, 0, 0])\n",
       "5 zero points for axis 0 of size 2"},
      {"%s: f32[2] = buffer(\"s\", data=[0.1, 0.0])\n  %z: i64[2] = buffer(\"z\", data=[0, 0])\n",
       "scale 0 is not a finite positive number"},
  };
  for (const auto& [constants, message] : cases) {
    auto g = ir::parse_graph(
        "graph(%x: f32[1, 2]) {\n  %q: i8[2, 2] = parameter(\"q\", data=[1, 2, 3, 4])\n  " + constants +
        "  %w: f32[2, 2] = quantized_decomposed.dequantize_per_channel.default(input=%q, "
        "scales=%s, zero_points=%z, axis=0, quant_min=-127, quant_max=127, dtype=dtype.i8, *, "
        "out_dtype=None)\n  %y: f32[1, 2] = aten.mm.default(self=%x, mat2=%w)\n  return (%y)\n}");
    auto pass = make_lower_quantize_dequantize_pass();
    try {
      pass->run(*g, {});
      ADD_FAILURE() << "no error for " << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << message;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(LowerQuantizeDequantize, RunTimeParametersBecomeTensorArithmetic) {
  // Scale and zero point computed at run time (dynamic quantization): tensor operands, same arithmetic.
  auto pass = make_lower_quantize_dequantize_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[4], %s: f32[], %z: i64[]) {
  %f: f32[4] = aten.fake_quantize_per_tensor_affine.tensor_qparams(self=%x, scale=%s, zero_point=%z, quant_min=0, quant_max=15)
  return (%f)
})");
  ASSERT_TRUE(pass->run(*g, {}));
  ir::verify(*g);
#ifdef KILN_LOWERING_HAVE_REFERENCE
  const std::vector<float> xs = {0.3f, -0.3f, 2.0f, 0.25f};
  HostTensor s(DType::Float32, {}), z(DType::Int64, {});
  s.set_from_double(0, 0.5);  // (a power of two: 1 / s is exact in any precision)
  z.set_from_double(0, 4);
  const auto out = runtime::run_in_libtorch(*g, {HostTensor::from_floats(xs, {4}), s, z});
  for (int64_t k = 0; k < 4; ++k) {
    const float q = detail::quantize_value(xs[static_cast<size_t>(k)], 0.5, 4, 0, 15);
    EXPECT_EQ(out[0].get_as_double(k), detail::dequantize_value(q, 0.5, 4)) << k;
  }
#endif
}

TEST(LowerQuantizeDequantize, DynamicQuantizationWithChooseQparamsRunsTorchsArithmetic) {
  // PT2E's dynamic quantization: parameters from the input's extremes, then quantize/dequantize with them.
  auto pass = make_lower_quantize_dequantize_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[6]) {
  %s: f64[1], %z: i64[1] = quantized_decomposed.choose_qparams.tensor(input=%x, quant_min=0, quant_max=255, eps=1.1920928955078125e-07, dtype=dtype.u8)
  %q: u8[6] = quantized_decomposed.quantize_per_tensor.tensor(input=%x, scale=%s, zero_point=%z, quant_min=0, quant_max=255, dtype=dtype.u8)
  %d: f32[6] = quantized_decomposed.dequantize_per_tensor.tensor(input=%q, scale=%s, zero_point=%z, quant_min=0, quant_max=255, dtype=dtype.u8, *, out_dtype=None)
  return (%d, %s, %z)
})");
  ASSERT_TRUE(pass->run(*g, {}));
  ir::verify(*g);
  for (const ir::Node* n : g->nodes()) EXPECT_EQ(n->target().ns, "aten") << ir::print_graph(*g);
#ifdef KILN_LOWERING_HAVE_REFERENCE
  const std::vector<float> xs = {-1.3f, 0.2f, 2.9f, 0.0f, -0.7f, 1.55f};
  const auto out = runtime::run_in_libtorch(*g, {HostTensor::from_floats(xs, {6})});
  // torch: lo = -1.3, hi = 2.9 (fp32), scale = (hi - lo) / 255, zero point = 0 - round(lo / scale).
  const float scale = (2.9f - -1.3f) / 255.0f;
  const int64_t zp = static_cast<int64_t>(-std::nearbyint(-1.3f / scale));
  EXPECT_EQ(out[1].get_as_double(0), static_cast<double>(scale));
  EXPECT_EQ(out[2].get_as_double(0), static_cast<double>(zp));
  for (int64_t k = 0; k < 6; ++k) {
    const float q = detail::quantize_value(xs[static_cast<size_t>(k)], scale, zp, 0, 255);
    EXPECT_EQ(out[0].get_as_double(k), detail::dequantize_value(q, scale, zp)) << k;
  }
#endif
}

}  // namespace
}  // namespace kiln::lowering
