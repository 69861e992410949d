#pragma once
// The IR text form: a stable printer and a parser for the same text (pass tests are written in it).
//
//   graph(%x: f32[s77, 3, 16, 16]) {
//     symbol s77 in [1, 64] hint 2
//     %p_conv_weight: f32[8, 3, 3, 3] = parameter("conv.weight")
//     %conv2d: f32[s77, 8, 16, 16] = aten.conv2d.default(input=%x, weight=%p_conv_weight, stride=[1, 1])
//     %sym_size_int: sym_int = aten.sym_size.int(self=%x, dim=0)
//     %a: f32[2], %b: i64[2] = aten.max.dim(self=%y, dim=0)
//     return (%conv2d)
//   }

#include <string>
#include <string_view>

#include "kiln/ir/graph.h"

namespace kiln::ir {

struct PrintOptions {
  bool metadata = false;       // append "# nn_module_stack" comments
  bool constant_values = false;  // print small constants' values inline (data=[...])
};

/// Prints the graph as text. Stable: the same graph always prints the same text.
std::string print_graph(const Graph& graph, const PrintOptions& options = {});
/// Parses text as print_graph writes it. Throws kiln::Error(InvalidInput) with line and column.
std::unique_ptr<Graph> parse_graph(std::string_view text);

}  // namespace kiln::ir
