#pragma once
// The IR text form: a stable printer and a parser for the same text (pass tests are written in it).
//
//   graph(%x: f32[s77, 3, 16, 16], %n: sym_int) {
//     symbol s77 in [1, 64] hint 2
//     %p_conv_weight: f32[8, 3, 3, 3] = parameter("conv.weight")
//     %c: i64[2] = constant("_tensor_constant0", data=[4, 5])
//     %conv2d: f32[s77, 8, 16, 16] = aten.conv2d.default(input=%x, weight=%p_conv_weight, stride=[1, 1])
//     %sym_size_int: sym_int(s77) = aten.sym_size.int(self=%x, dim=0)
//     %a: f32[2], %b: i64[2] = aten.max.dim(self=%y, dim=0)
//     node assert_1: = aten._assert_scalar.default(self=%ok, assert_msg="bad")
//     %seg: f32[2] = kiln.engine_segment.default(inputs=[%a]) graph(%i: f32[2]) {
//       %r: f32[2] = aten.relu.default(self=%i)
//       return (%r)
//     }
//     return (%conv2d)
//   }
//
// Lines:
// - "graph(INPUTS) {" ... "}": inputs are "%name: TYPE". Every graph ends with "return (%a, %b)".
// - "symbol NAME [in [MIN, MAX]] [hint H]": a symbol's range (MIN may be "-inf", MAX "inf") and export hint.
// - Constants: "%name: TYPE = parameter|buffer|constant(\"fqn\"[, data=[v, ...]])". Without data= the parsed
//   constant's data is undefined; with it, the values fill a tensor of TYPE's dtype and (static) sizes.
// - Nodes: "OUTPUTS = ns.op.overload(name=ARG, ...)". OUTPUTS are "%name: TYPE" separated by commas, or nothing
//   for a node without outputs ("= op(...)"). The node's name is its first output's name unless the line starts
//   with "node NAME: ". A "*" among the arguments marks every later argument keyword-only. A nested subgraph
//   follows the call as a whole "graph(...) { ... }" block.
// - "# ..." starts a comment anywhere outside a string (the printer writes metadata there; the parser ignores it).
// - Value names are "%name" with name in [A-Za-z0-9_.]+, or %"any text" quoted.
//
// TYPE:
// - Tensors: "DT[d0, d1, ...]" with DT a dtype short name (f32 f16 bf16 f64 i64 i32 i16 i8 u8 bool) and each
//   dim a SymExpr infix expression ("s0", "2*s0 + 1", "floordiv(s0, 2)"); then optionally
//   "{strides=[...], offset=E, requires_grad}" (strides only when not contiguous, offset only when not 0), then
//   optionally "@DEVICE" ("@cuda:0"; absent means cpu).
// - "sym_int" or "sym_int(EXPR)" (a SymInt with its known value), "sym_float", "sym_bool", "opaque".
//
// ARG (Argument::to_string writes the same spellings):
// - None; True / False; integers "3", "-1"; floats always with '.', an exponent, or inf/nan: "1.0", "1e-05",
//   "inf", "-inf", "nan"; strings double-quoted with \" \\ \n \t \r \xHH escapes.
// - Values "%x": a Tensor, SymInt, SymFloat or SymBool argument according to the value's kind.
// - A constant SymInt: "sym(3)".
// - Lists: "[1, 2]" Ints (and "[]"), "[1.0, 2.5]" Floats, "[True, False]" Bools, "[\"a\"]" Strings,
//   "[%a, %b]" Tensors (or SymInts when the values are SymInts, e.g. "[%s0, 3]"), "?[%a, None]" OptionalTensors,
//   "sym[2, 3]" SymInts whose entries are all constants. Empty lists of other kinds: "float[]", "bool[]",
//   "str[]", "tensor[]", "?[]", "sym[]".
// - "dtype.f32" (ScalarType), "layout.strided" (Layout: unknown sparse_coo sparse_csr sparse_csc sparse_bsr
//   sparse_bsc mkldnn strided), "memory_format.contiguous" (MemoryFormat: unknown contiguous channels_last
//   channels_last_3d preserve), "device(\"cuda:0\")" (Device).
// - A nested graph (Graph, the subgraph arguments of higher-order ops): a whole "graph(...) { ... }" block in
//   the argument's place, "true_fn=graph(%a: f32[2]) {\n ... return (%r)\n}, operands=[%x]".

#include <string>
#include <string_view>

#include "kiln/ir/graph.h"

namespace kiln::ir {

struct PrintOptions {
  bool metadata = false;       // append "# nn_module_stack=..." comments (every metadata key but stack_trace)
  bool constant_values = false;  // print small constants' values inline (data=[...])
  int64_t max_constant_elements = 64;  // "small": at most this many elements
};

/// Prints the graph as text. Stable: the same graph always prints the same text.
std::string print_graph(const Graph& graph, const PrintOptions& options = {});
/// Parses text as print_graph writes it. Throws kiln::Error(InvalidInput) with line and column.
std::unique_ptr<Graph> parse_graph(std::string_view text);

}  // namespace kiln::ir
