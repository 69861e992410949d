// Shape-op decompositions: transpose/t/numpy_T → permute; stack → unsqueeze + cat; unbind → select;
// split/split_with_sizes/chunk → slice; expand_as → expand.

#include <algorithm>
#include <numeric>

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

bool decompose_transpose(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t rank = x->meta().rank();
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  std::iota(dims.begin(), dims.end(), 0);
  if (n->target().name == "transpose") {
    std::swap(dims[static_cast<size_t>(normalize_dim(n->arg("dim0").as_int(), rank, *n))],
              dims[static_cast<size_t>(normalize_dim(n->arg("dim1").as_int(), rank, *n))]);
  } else if (n->target().name == "t" && rank < 2) {
    replace_node(g, n, {x});  // t() of a 0-d or 1-d tensor is the tensor itself
    return true;
  } else {
    std::reverse(dims.begin(), dims.end());
  }
  Builder b(g, n);
  replace_node(g, n, {b.permute(x, dims)});
  return true;
}

bool decompose_stack(ir::Graph& g, ir::Node* n) {
  const auto& tensors = n->arg("tensors").as_tensors();
  if (tensors.empty()) return false;
  const int64_t dim = normalize_dim(int_arg(*n, "dim", 0), tensors[0]->meta().rank() + 1, *n);
  Builder b(g, n);
  std::vector<ir::Value*> parts;
  for (ir::Value* t : tensors) parts.push_back(b.unsqueeze(t, dim));
  ir::Value* out = b.op("aten.cat.default", {named("tensors", Argument::tensors(parts)), named("dim", Argument::int_(dim))},
                        n->output(0)->meta(), "cat");
  replace_node(g, n, {out});
  return true;
}

bool decompose_unbind(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t dim = normalize_dim(int_arg(*n, "dim", 0), x->meta().rank(), *n);
  auto size = x->meta().sizes[static_cast<size_t>(dim)].as_int();
  if (!size || static_cast<size_t>(*size) != n->outputs().size()) return false;
  Builder b(g, n);
  std::vector<ir::Value*> parts;
  for (int64_t i = 0; i < *size; ++i) {
    // Unused pieces are not materialized.
    ir::Value* out = n->output(static_cast<size_t>(i));
    parts.push_back(g.is_output(out) || !g.users(out).empty() ? b.select(x, dim, i) : nullptr);
  }
  replace_node(g, n, parts);
  return true;
}

bool decompose_split(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t dim = normalize_dim(int_arg(*n, "dim", 0), x->meta().rank(), *n);
  auto size = x->meta().sizes[static_cast<size_t>(dim)].as_int();
  if (!size) return false;
  std::vector<int64_t> lengths;
  const std::string& name = n->target().name;
  if (name == "split_with_sizes") {
    lengths = n->arg("split_sizes").as_ints();
  } else {
    int64_t piece = 0;
    if (name == "chunk") {
      const int64_t chunks = n->arg("chunks").as_int();
      if (chunks <= 0) return false;
      piece = (*size + chunks - 1) / chunks;
    } else {
      piece = n->arg("split_size").as_int();
    }
    if (piece <= 0) return false;
    for (int64_t start = 0; start < *size; start += piece) lengths.push_back(std::min(piece, *size - start));
    if (lengths.empty()) lengths.push_back(0);
  }
  if (lengths.size() != n->outputs().size()) return false;
  Builder b(g, n);
  std::vector<ir::Value*> parts;
  int64_t start = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    ir::Value* out = n->output(i);
    const bool used = g.is_output(out) || !g.users(out).empty();
    parts.push_back(used ? b.slice(x, dim, start, start + lengths[i]) : nullptr);
    start += lengths[i];
  }
  replace_node(g, n, parts);
  return true;
}

bool decompose_expand_as(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  ir::Value* other = tensor_arg(*n, "other");
  auto sizes = size_args(g, n, other, other->meta().sizes);
  if (!sizes) return false;
  Builder b(g, n);
  ir::Value* out = b.op("aten.expand.default",
                        {named("self", Argument::tensor(x)), named("size", sym_ints_argument(*sizes)),
                         named("implicit", Argument::bool_(false), true)},
                        n->output(0)->meta(), "expand");
  replace_node(g, n, {out});
  return true;
}

}  // namespace kiln::lowering::detail
