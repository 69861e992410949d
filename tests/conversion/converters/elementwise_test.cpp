// Binary arithmetic, comparison, logical, where and clamp converters against libtorch eager: tensor/tensor
// with broadcasting on a dynamic batch, tensor/scalar, mixed dtypes (promotion), alpha and rounding modes.
// Tolerance: the harness default fp32 allclose(1e-4, 1e-5); integer and bool results must match exactly (they
// do under it).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

// Two inputs: x f32[s0, 4, 5] and z of type `z_type`; run at batch 2 and 5.
NamedCase binary(const std::string& name, const std::string& call, const std::string& out, const std::string& z_type,
                 InputFill zfill = {}, std::vector<int64_t> z_shape = {4, 5}) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: f32[s0, 4, 5], %z: " + z_type + ") {\n  symbol s0 in [1, 8] hint 2\n  %y: " + out + " = " +
           call + "\n  return (%y)\n}\n";
  c.c.runs = {{{2, 4, 5}, z_shape}, {{5, 4, 5}, z_shape}};
  c.c.fills[1] = zfill;
  return c;
}

// Binary cases that need a bool lhs get "%w = x > 0" first.
NamedCase with_bool_lhs(NamedCase c) {
  const std::string marker = "  %y:";
  const size_t at = c.c.ir.find(marker);
  c.c.ir.insert(at, "  %w: bool[s0, 4, 5] = aten.gt.Scalar(self=%x, other=0)\n");
  return c;
}

NamedCase scalar_op(const std::string& name, const std::string& call, const std::string& out = "f32[s0, 4, 5]",
                    InputFill fill = {}) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op("f32[s0, 4, 5]", call, out, "  symbol s0 in [1, 8] hint 2\n");
  c.c.runs = {{{3, 4, 5}}, {{6, 4, 5}}};
  c.c.fills[0] = fill;
  return c;
}

NamedCase int_op(const std::string& name, const std::string& call, const std::string& out) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: i64[3, 4], %z: i64[3, 4]) {\n  %y: " + out + " = " + call + "\n  return (%y)\n}\n";
  c.c.fills[0] = {-20, 20};
  c.c.fills[1] = {1, 7};
  return c;
}

CaseList elementwise_cases() {
  const std::string f = "f32[s0, 4, 5]", b = "bool[s0, 4, 5]";
  return {
      binary("add_broadcast", "aten.add.Tensor(self=%x, other=%z, *, alpha=1)", f, "f32[4, 5]"),
      binary("add_alpha", "aten.add.Tensor(self=%x, other=%z, *, alpha=2.5)", f, "f32[5]", {}, {5}),
      binary("add_int_promotes", "aten.add.Tensor(self=%x, other=%z, *, alpha=1)", f, "i64[4, 1]", {-5, 5}, {4, 1}),
      scalar_op("add_scalar", "aten.add.Scalar(self=%x, other=1.5, alpha=1)"),
      binary("sub", "aten.sub.Tensor(self=%x, other=%z, *, alpha=1)", f, "f32[4, 5]"),
      binary("sub_alpha", "aten.sub.Tensor(self=%x, other=%z, *, alpha=3)", f, "f32[4, 5]"),
      scalar_op("sub_scalar", "aten.sub.Scalar(self=%x, other=2, alpha=1)"),
      scalar_op("rsub_scalar", "aten.rsub.Scalar(self=%x, other=2, alpha=1)"),
      binary("rsub_tensor", "aten.rsub.Tensor(self=%x, other=%z, *, alpha=2)", f, "f32[4, 5]"),
      binary("mul", "aten.mul.Tensor(self=%x, other=%z)", f, "f32[1, 5]", {}, {1, 5}),
      scalar_op("mul_scalar", "aten.mul.Scalar(self=%x, other=-0.75)"),
      binary("div", "aten.div.Tensor(self=%x, other=%z)", f, "f32[4, 5]", {0.5, 3}),
      scalar_op("div_scalar", "aten.div.Scalar(self=%x, other=4)"),
      binary("div_floor", "aten.div.Tensor_mode(self=%x, other=%z, *, rounding_mode=\"floor\")", f, "f32[4, 5]",
             {0.5, 3}),
      binary("div_trunc", "aten.div.Tensor_mode(self=%x, other=%z, *, rounding_mode=\"trunc\")", f, "f32[4, 5]",
             {0.5, 3}),
      scalar_op("div_scalar_floor", "aten.div.Scalar_mode(self=%x, other=0.3, *, rounding_mode=\"floor\")"),
      int_op("div_int_true", "aten.div.Tensor(self=%x, other=%z)", "f32[3, 4]"),
      int_op("div_int_floor", "aten.div.Tensor_mode(self=%x, other=%z, *, rounding_mode=\"floor\")", "i64[3, 4]"),
      int_op("floor_divide", "aten.floor_divide.default(self=%x, other=%z)", "i64[3, 4]"),
      int_op("remainder_int", "aten.remainder.Tensor(self=%x, other=%z)", "i64[3, 4]"),
      binary("remainder", "aten.remainder.Tensor(self=%x, other=%z)", f, "f32[4, 5]", {0.5, 3}),
      scalar_op("remainder_scalar", "aten.remainder.Scalar(self=%x, other=0.7)"),
      scalar_op("pow_scalar", "aten.pow.Tensor_Scalar(self=%x, exponent=2)"),
      scalar_op("pow_scalar_frac", "aten.pow.Tensor_Scalar(self=%x, exponent=0.5)", f, {0.1, 4}),
      binary("pow_tensor", "aten.pow.Tensor_Tensor(self=%x, exponent=%z)", f, "f32[4, 5]", {-2, 2}),
      binary("maximum", "aten.maximum.default(self=%x, other=%z)", f, "f32[4, 5]"),
      binary("minimum", "aten.minimum.default(self=%x, other=%z)", f, "f32[4, 5]"),
      binary("max_other", "aten.max.other(self=%x, other=%z)", f, "f32[4, 5]"),
      binary("min_other", "aten.min.other(self=%x, other=%z)", f, "f32[4, 5]"),
      binary("eq", "aten.eq.Tensor(self=%x, other=%z)", b, "f32[4, 5]"),
      scalar_op("eq_scalar", "aten.eq.Scalar(self=%x, other=0)", b),
      binary("ne", "aten.ne.Tensor(self=%x, other=%z)", b, "f32[4, 5]"),
      scalar_op("ne_scalar", "aten.ne.Scalar(self=%x, other=1)", b),
      binary("lt", "aten.lt.Tensor(self=%x, other=%z)", b, "f32[4, 5]"),
      scalar_op("lt_scalar", "aten.lt.Scalar(self=%x, other=0.25)", b),
      binary("le", "aten.le.Tensor(self=%x, other=%z)", b, "f32[5]", {}, {5}),
      scalar_op("le_scalar", "aten.le.Scalar(self=%x, other=0.25)", b),
      binary("gt", "aten.gt.Tensor(self=%x, other=%z)", b, "f32[4, 5]"),
      scalar_op("gt_scalar", "aten.gt.Scalar(self=%x, other=-0.5)", b),
      binary("ge", "aten.ge.Tensor(self=%x, other=%z)", b, "f32[4, 5]"),
      scalar_op("ge_scalar", "aten.ge.Scalar(self=%x, other=-0.5)", b),
      binary("logical_and", "aten.logical_and.default(self=%x, other=%z)", b, "bool[4, 5]"),
      binary("logical_or", "aten.logical_or.default(self=%x, other=%z)", b, "bool[4, 5]"),
      binary("logical_xor", "aten.logical_xor.default(self=%x, other=%z)", b, "bool[4, 5]"),
      scalar_op("logical_not", "aten.logical_not.default(self=%x)", b, {-1, 1}),
      binary("where", "aten.where.self(condition=%z, self=%x, other=%x)", f, "bool[4, 5]"),
      [] {
        NamedCase c;
        c.name = "where_mixed";
        c.c.ir =
            "graph(%x: f32[s0, 4, 5], %z: bool[4, 5]) {\n  symbol s0 in [1, 8] hint 2\n"
            "  %n: f32[s0, 4, 5] = aten.neg.default(self=%x)\n"
            "  %y: f32[s0, 4, 5] = aten.where.self(condition=%z, self=%x, other=%n)\n  return (%y)\n}\n";
        c.c.runs = {{{2, 4, 5}, {4, 5}}, {{5, 4, 5}, {4, 5}}};
        return c;
      }(),
      binary("where_scalar_other", "aten.where.ScalarOther(condition=%z, self=%x, other=0.5)", f, "bool[4, 5]"),
      binary("where_scalar_self", "aten.where.ScalarSelf(condition=%z, self=0.5, other=%x)", f, "bool[4, 5]"),
      binary("where_scalars", "aten.where.Scalar(condition=%z, self=1.0, other=-1.0)", "f32[4, 5]", "bool[4, 5]"),
      scalar_op("clamp", "aten.clamp.default(self=%x, min=-0.5, max=0.75)"),
      scalar_op("clamp_min_only", "aten.clamp.default(self=%x, min=0.1, max=None)"),
      binary("clamp_tensor", "aten.clamp.Tensor(self=%x, min=%z, max=None)", f, "f32[4, 5]"),
      scalar_op("clamp_min", "aten.clamp_min.default(self=%x, min=0.25)"),
      scalar_op("clamp_max", "aten.clamp_max.default(self=%x, max=-0.3)"),
      scalar_op("clamp_min_int", "aten.clamp_min.default(self=%x, min=1)", "f32[s0, 4, 5]", {-3, 3}),
      binary("clamp_min_tensor", "aten.clamp_min.Tensor(self=%x, min=%z)", f, "f32[4, 5]"),
      binary("clamp_max_tensor", "aten.clamp_max.Tensor(self=%x, max=%z)", f, "f32[4, 5]"),
      binary("masked_fill_scalar", "aten.masked_fill.Scalar(self=%x, mask=%z, value=-3.5)", f, "bool[4, 5]"),
      [] {
        NamedCase c;
        c.name = "masked_fill_tensor";
        c.c.ir =
            "graph(%x: f32[s0, 4, 5], %z: bool[4, 5], %v: f32[]) {\n  symbol s0 in [1, 8] hint 2\n"
            "  %y: f32[s0, 4, 5] = aten.masked_fill.Tensor(self=%x, mask=%z, value=%v)\n  return (%y)\n}\n";
        c.c.runs = {{{2, 4, 5}, {4, 5}, {}}, {{5, 4, 5}, {4, 5}, {}}};
        return c;
      }(),
      scalar_op("square", "aten.square.default(self=%x)"),
      scalar_op("tril", "aten.tril.default(self=%x, diagonal=0)"),
      scalar_op("triu_offset", "aten.triu.default(self=%x, diagonal=1)"),
      with_bool_lhs(binary("bitwise_and", "aten.bitwise_and.Tensor(self=%w, other=%z)", b, "bool[4, 5]")),
      with_bool_lhs(binary("bitwise_or", "aten.bitwise_or.Tensor(self=%w, other=%z)", b, "bool[4, 5]")),
      with_bool_lhs(binary("bitwise_xor", "aten.bitwise_xor.Tensor(self=%w, other=%z)", b, "bool[4, 5]")),
      with_bool_lhs(binary("bitwise_not", "aten.bitwise_not.default(self=%w)", b, "bool[4, 5]")),
      with_bool_lhs(binary("dunder_and", "aten.__and__.Tensor(self=%w, other=%z)", b, "bool[4, 5]")),
      with_bool_lhs(binary("dunder_or", "aten.__or__.Tensor(self=%w, other=%z)", b, "bool[4, 5]")),
      with_bool_lhs(binary("dunder_xor", "aten.__xor__.Tensor(self=%w, other=%z)", b, "bool[4, 5]")),
      // SymInt Scalars only known at run time (the linear index of index.Tensor over symbolic dims, arange
      // offsets): integer arithmetic keeps the tensor's dtype, a float tensor stays float, comparisons; negative
      // values wrap as Python's modulo does.
      [] {
        NamedCase c;
        c.name = "sym_int_scalars";
        c.c.ir =
            "graph(%x: f32[s0, 4, 5], %i: i64[s0, 4], %k: i32[4]) {\n  symbol s0 in [1, 8] hint 2\n"
            "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n"
            "  %r: i64[s0, 4] = aten.remainder.Scalar(self=%i, other=%n)\n"
            "  %m: i64[s0, 4] = aten.mul.Scalar(self=%r, other=%n)\n"
            "  %a: i64[s0, 4] = aten.add.Tensor(self=%m, other=%n, *, alpha=1)\n"
            "  %s: i32[4] = aten.sub.Scalar(self=%k, other=%n, alpha=1)\n"
            "  %f: f32[s0, 4, 5] = aten.mul.Scalar(self=%x, other=%n)\n"
            "  %c: bool[s0, 4] = aten.lt.Scalar(self=%i, other=%n)\n"
            "  return (%r, %a, %s, %f, %c)\n}\n";
        c.c.runs = {{{2, 4, 5}, {2, 4}, {4}}, {{5, 4, 5}, {5, 4}, {4}}, {{1, 4, 5}, {1, 4}, {4}}};
        c.c.fills[1] = {-12, 12};
        c.c.fills[2] = {-12, 12};
        return c;
      }(),
  };
}

KILN_CONVERTER_CASES(Elementwise, elementwise_cases);

}  // namespace
}  // namespace kiln::conversion::testing
