// Global adaptive average pooling (every output size 1) is a mean over the spatial dims with keepdim: the
// form Core ATen exports, so both export forms of a classifier head reach the same graph.

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

bool decompose_global_adaptive_avg_pool(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const ir::Argument* output_size = n->find_arg("output_size");
  if (x == nullptr || output_size == nullptr || output_size->kind() != ir::Argument::Kind::Ints) return false;
  const std::vector<int64_t> sizes = output_size->as_ints();
  const int64_t rank = x->meta().rank();
  const auto spatial = static_cast<int64_t>(sizes.size());
  if (spatial == 0 || spatial > rank) return false;
  for (int64_t s : sizes) {
    if (s != 1) return false;
  }
  std::vector<int64_t> dims;
  for (int64_t d = rank - spatial; d < rank; ++d) dims.push_back(d);
  Builder b(g, n);
  replace_node(g, n, {b.reduce("aten.mean.dim", x, dims, /*keepdim=*/true)});
  return true;
}

}  // namespace kiln::lowering::detail
