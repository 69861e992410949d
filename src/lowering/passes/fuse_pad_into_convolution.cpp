// Moves a zero constant pad into the convolution that reads it, when the pad is symmetric, touches only the
// spatial dims, and the convolution is its only reader.

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool fuse_one(ir::Graph& graph, ir::Node* pad) {
  const bool constant_pad = detail::is_op(*pad, "aten.constant_pad_nd.default");
  const bool generic_pad = detail::is_op(*pad, "aten.pad.default");
  if (!constant_pad && !generic_pad) return false;
  if (generic_pad) {
    const ir::Argument* mode = pad->find_arg("mode");
    if (mode != nullptr && !mode->is_none() && mode->as_string() != "constant") return false;
  }
  if (detail::float_arg(*pad, "value", 0.0) != 0.0) return false;
  ir::Value* out = pad->output(0);
  if (graph.is_output(out)) return false;
  const auto users = graph.users(out);
  if (users.size() != 1) return false;
  ir::Node* conv = users[0];
  if (!detail::is_op(*conv, "aten.convolution.default") || detail::bool_arg(*conv, "transposed", false) ||
      detail::tensor_arg(*conv, "input") != out || detail::tensor_arg(*conv, "weight") == out) {
    return false;
  }
  std::vector<int64_t> padding = conv->arg("padding").as_ints();
  const std::vector<int64_t> amounts = pad->arg("pad").as_ints();
  const size_t spatial = padding.size();
  if (amounts.size() % 2 != 0 || amounts.size() / 2 > spatial) return false;
  // pad lists (before, after) pairs starting from the last dim.
  for (size_t k = 0; k < amounts.size() / 2; ++k) {
    const int64_t before = amounts[2 * k];
    const int64_t after = amounts[2 * k + 1];
    if (before != after || before < 0) return false;
    padding[spatial - 1 - k] += before;
  }
  conv->set_arg("padding", ir::Argument::ints(padding));
  conv->set_arg("input", ir::Argument::tensor(detail::tensor_arg(*pad, "self")));
  graph.erase_node(pad);
  return true;
}

bool run_fuse_pad(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) changed |= fuse_one(graph, node);
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_fuse_pad_into_convolution_pass() {
  return std::make_shared<FunctionPass>(
      "fuse_pad_into_convolution", "Moves a symmetric zero pad of the spatial dims into the convolution's padding.",
      run_fuse_pad);
}

}  // namespace kiln::lowering
