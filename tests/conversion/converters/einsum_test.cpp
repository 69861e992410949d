// einsum against libtorch eager: batched matmul, attention scores (torchvision maxvit's spaced upper-case
// form), outer product, transpose, sums, implicit output, ellipses, three operands, a dot product to a
// scalar, on dynamic batches where the equation has one. Tolerance: the harness default fp32 allclose(1e-4,
// 1e-5) (contractions of at most 16 terms of magnitude <= 2).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"
#include "kiln/conversion/registry.h"
#include "kiln/ir/text.h"

namespace kiln::conversion::testing {
namespace {

using Runs = std::vector<std::vector<std::vector<int64_t>>>;

NamedCase two(const std::string& name, const std::string& a, const std::string& b, const std::string& eq,
              const std::string& out, Runs runs = {}) {
  return graph_case(name, "%a: " + a + ", %b: " + b, "s0 in [1, 8] hint 2",
                    "  %y: " + out + " = aten.einsum.default(equation=\"" + eq +
                        "\", tensors=[%a, %b], *, path=None)\n  return (%y)\n",
                    std::move(runs));
}

NamedCase one(const std::string& name, const std::string& a, const std::string& eq, const std::string& out,
              Runs runs = {}) {
  return graph_case(name, "%a: " + a, "s0 in [1, 8] hint 2",
                    "  %y: " + out + " = aten.einsum.default(equation=\"" + eq +
                        "\", tensors=[%a], *, path=None)\n  return (%y)\n",
                    std::move(runs));
}

CaseList einsum_cases() {
  return {
      two("bmm", "f32[s0, 3, 4]", "f32[s0, 4, 5]", "bij,bjk->bik", "f32[s0, 3, 5]",
          {{{2, 3, 4}, {2, 4, 5}}, {{5, 3, 4}, {5, 4, 5}}}),
      two("maxvit_scores", "f32[s0, 2, 3, 4, 8]", "f32[s0, 2, 3, 6, 8]", "B G H I D, B G H J D -> B G H I J",
          "f32[s0, 2, 3, 4, 6]", {{{1, 2, 3, 4, 8}, {1, 2, 3, 6, 8}}, {{3, 2, 3, 4, 8}, {3, 2, 3, 6, 8}}}),
      two("maxvit_values", "f32[s0, 2, 3, 4, 6]", "f32[s0, 2, 3, 6, 8]", "B G H I J, B G H J D -> B G H I D",
          "f32[s0, 2, 3, 4, 8]", {{{1, 2, 3, 4, 6}, {1, 2, 3, 6, 8}}, {{2, 2, 3, 4, 6}, {2, 2, 3, 6, 8}}}),
      two("outer", "f32[5]", "f32[3]", "i,j->ij", "f32[5, 3]"),
      two("dot", "f32[7]", "f32[7]", "i,i->", "f32[]"),
      two("implicit_matmul", "f32[3, 4]", "f32[4, 6]", "ij,jk", "f32[3, 6]"),
      two("weight_on_last_dim", "f32[s0, 5, 8]", "f32[8, 4]", "bnd,de->bne", "f32[s0, 5, 4]",
          {{{2, 5, 8}, {8, 4}}, {{4, 5, 8}, {8, 4}}}),
      two("sum_before_contract", "f32[3, 4, 5]", "f32[5, 2]", "ijk,kl->il", "f32[3, 2]"),
      two("hadamard_batch", "f32[s0, 6]", "f32[s0, 6]", "bi,bi->bi", "f32[s0, 6]",
          {{{2, 6}, {2, 6}}, {{5, 6}, {5, 6}}}),
      two("ellipsis", "f32[s0, 2, 3, 4]", "f32[s0, 2, 4, 5]", "...ij,...jk->...ik", "f32[s0, 2, 3, 5]",
          {{{1, 2, 3, 4}, {1, 2, 4, 5}}, {{3, 2, 3, 4}, {3, 2, 4, 5}}}),
      two("ellipsis_unequal_ranks", "f32[2, 3, 4]", "f32[4, 5]", "...ij,jk->...ik", "f32[2, 3, 5]"),
      one("transpose", "f32[s0, 4]", "ij->ji", "f32[4, s0]", {{{2, 4}}, {{6, 4}}}),
      one("sum_all", "f32[3, 4]", "ij->", "f32[]"),
      one("sum_dim", "f32[s0, 4, 5]", "bij->bj", "f32[s0, 5]", {{{2, 4, 5}}, {{3, 4, 5}}}),
      one("implicit_permute", "f32[3, 4, 5]", "kji", "f32[5, 4, 3]"),
      graph_case("three_operands", "%a: f32[3, 4], %b: f32[4, 5], %c: f32[5, 2]", "s0 in [1, 8] hint 2",
                 "  %y: f32[3, 2] = aten.einsum.default(equation=\"ij,jk,kl->il\", tensors=[%a, %b, %c], *, "
                 "path=None)\n  return (%y)\n"),
  };
}

KILN_CONVERTER_CASES(Einsum, einsum_cases);

// True when the registry takes the graph's last node.
bool supported_by_registry(const std::string& ir) {
  std::unique_ptr<ir::Graph> g = ir::parse_graph(ir);
  return converters().contains(*g->nodes().back(), settings::CompilationSettings{});
}

// Diagonals and traces stay in PyTorch: the validator rejects them (and so does broadcasting a size-1 dim).
TEST(EinsumConverter, DiagonalsAndBroadcastsFallBack) {
  for (const std::string& eq : {"ii->i", "ii->", "bii->b"}) {
    SCOPED_TRACE(eq);
    const bool three = eq[0] == 'b';
    const std::string ir = "graph(%a: f32[" + std::string(three ? "2, " : "") + "3, 3]) {\n  %y: f32[" +
                           std::string(eq == "ii->" ? ""
                                       : three      ? "2"
                                                    : "3") +
                           "] = aten.einsum.default(equation=\"" + eq +
                           "\", tensors=[%a], *, path=None)\n  return (%y)\n}\n";
    EXPECT_FALSE(supported_by_registry(ir));
  }
  EXPECT_FALSE(supported_by_registry(
      "graph(%a: f32[1, 4], %b: f32[3, 4]) {\n  %y: f32[3] = aten.einsum.default(equation=\"ij,ij->i\", "
      "tensors=[%a, %b], *, path=None)\n  return (%y)\n}\n"));
  EXPECT_TRUE(supported_by_registry(
      "graph(%a: f32[3, 4], %b: f32[3, 4]) {\n  %y: f32[3] = aten.einsum.default(equation=\"ij,ij->i\", "
      "tensors=[%a, %b], *, path=None)\n  return (%y)\n}\n"));
}

}  // namespace
}  // namespace kiln::conversion::testing
