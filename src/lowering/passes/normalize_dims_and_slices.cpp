// Makes dims non-negative (dim=-1 on a rank-4 tensor becomes 3) for the ops that take dims, and makes slice
// bounds explicit: start and end within [0, size] when the size is static, None replaced by 0 / size.
// select's negative index becomes non-negative when the size is static.

#include <limits>
#include <map>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

struct DimArg {
  const char* name;
  int rank_extra;  // 1 for ops whose dim indexes the output (unsqueeze, stack)
};

// Ops whose dims are normalized; the rank comes from "self" (or the first of "tensors").
const std::map<std::string, std::vector<DimArg>>& dim_table() {
  static const std::map<std::string, std::vector<DimArg>> table = {
      {"aten.select.int", {{"dim", 0}}},
      {"aten.unsqueeze.default", {{"dim", 1}}},
      {"aten.squeeze.dim", {{"dim", 0}}},
      {"aten.squeeze.dims", {{"dim", 0}}},
      {"aten.cat.default", {{"dim", 0}}},
      {"aten.stack.default", {{"dim", 1}}},
      {"aten.softmax.int", {{"dim", 0}}},
      {"aten._softmax.default", {{"dim", 0}}},
      {"aten.log_softmax.int", {{"dim", 0}}},
      {"aten._log_softmax.default", {{"dim", 0}}},
      {"aten.mean.dim", {{"dim", 0}}},
      {"aten.sum.dim_IntList", {{"dim", 0}}},
      {"aten.amax.default", {{"dim", 0}}},
      {"aten.amin.default", {{"dim", 0}}},
      {"aten.prod.dim_int", {{"dim", 0}}},
      {"aten.max.dim", {{"dim", 0}}},
      {"aten.min.dim", {{"dim", 0}}},
      {"aten.argmax.default", {{"dim", 0}}},
      {"aten.argmin.default", {{"dim", 0}}},
      {"aten.var.correction", {{"dim", 0}}},
      {"aten.std.correction", {{"dim", 0}}},
      {"aten.transpose.int", {{"dim0", 0}, {"dim1", 0}}},
      {"aten.permute.default", {{"dims", 0}}},
      {"aten.split.Tensor", {{"dim", 0}}},
      {"aten.split_with_sizes.default", {{"dim", 0}}},
      {"aten.chunk.default", {{"dim", 0}}},
      {"aten.unbind.int", {{"dim", 0}}},
      {"aten.cumsum.default", {{"dim", 0}}},
      {"aten.gather.default", {{"dim", 0}}},
      {"aten.index_select.default", {{"dim", 0}}},
      {"aten.narrow.default", {{"dim", 0}}},
      {"aten.topk.default", {{"dim", 0}}},
      {"aten.sort.default", {{"dim", 0}}},
      {"aten.glu.default", {{"dim", 0}}},
      {"aten.flip.default", {{"dims", 0}}},
      {"aten.roll.default", {{"dims", 0}}},
      {"aten.any.dim", {{"dim", 0}}},
      {"aten.all.dim", {{"dim", 0}}},
  };
  return table;
}

int64_t rank_of(const ir::Node& node) {
  if (ir::Value* self = detail::tensor_arg(node, "self")) return self->meta().rank();
  if (ir::Value* input = detail::tensor_arg(node, "input")) return input->meta().rank();
  if (const ir::Argument* ts = node.find_arg("tensors")) {
    for (ir::Value* v : ts->as_tensors()) {
      if (v != nullptr && v->meta().rank() > 1) return v->meta().rank();  // a 1-d empty tensor may be legacy
    }
    if (!ts->as_tensors().empty() && ts->as_tensors()[0] != nullptr) return ts->as_tensors()[0]->meta().rank();
  }
  return -1;
}

bool normalize_dims(ir::Node* node) {
  auto it = dim_table().find(node->target().to_string());
  if (it == dim_table().end()) return false;
  const int64_t rank = rank_of(*node);
  if (rank < 0) return false;
  bool changed = false;
  for (const DimArg& spec : it->second) {
    const ir::Argument* a = node->find_arg(spec.name);
    if (a == nullptr || a->is_none()) continue;
    const int64_t r = rank + spec.rank_extra;
    if (a->kind() == ir::Argument::Kind::Int) {
      const int64_t d = a->as_int();
      if (d >= 0) continue;
      node->set_arg(spec.name, ir::Argument::int_(detail::normalize_dim(d, r, *node)));
      changed = true;
    } else if (a->kind() == ir::Argument::Kind::Ints) {
      std::vector<int64_t> dims = a->as_ints();
      bool any = false;
      for (auto& d : dims) {
        if (d < 0) {
          d = detail::normalize_dim(d, r, *node);
          any = true;
        }
      }
      if (any) {
        node->set_arg(spec.name, ir::Argument::ints(dims));
        changed = true;
      }
    }
  }
  return changed;
}

bool normalize_select_index(ir::Node* node) {
  if (!detail::is_op(*node, "aten.select.int")) return false;
  const ir::Argument& index = node->arg("index");
  if (index.kind() != ir::Argument::Kind::Int || index.as_int() >= 0) return false;
  ir::Value* self = detail::tensor_arg(*node, "self");
  const int64_t dim = detail::normalize_dim(node->arg("dim").as_int(), self->meta().rank(), *node);
  auto size = self->meta().sizes[static_cast<size_t>(dim)].as_int();
  if (!size || index.as_int() + *size < 0) return false;
  node->set_arg("index", ir::Argument::int_(index.as_int() + *size));
  return true;
}

bool normalize_slice(ir::Node* node) {
  if (!detail::is_op(*node, "aten.slice.Tensor")) return false;
  ir::Value* self = detail::tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const int64_t dim = detail::normalize_dim(detail::int_arg(*node, "dim", 0), self->meta().rank(), *node);
  auto size = self->meta().sizes[static_cast<size_t>(dim)].as_int();
  auto bound = [&](const char* name, int64_t fallback) -> ir::Argument {
    const ir::Argument* a = node->find_arg(name);
    if (a == nullptr || a->is_none()) return ir::Argument::int_(fallback);
    if (a->kind() != ir::Argument::Kind::Int || !size) return *a;  // symbolic: leave as stated
    int64_t v = a->as_int();
    if (v < 0) v += *size;
    return ir::Argument::int_(std::clamp<int64_t>(v, 0, *size));
  };
  const int64_t end_default = size ? *size : std::numeric_limits<int64_t>::max();
  std::vector<ir::NamedArgument> args = {
      detail::named("self", ir::Argument::tensor(self)),
      detail::named("dim", ir::Argument::int_(dim)),
      detail::named("start", bound("start", 0)),
      detail::named("end", bound("end", end_default)),
      detail::named("step", node->has_arg("step") && !node->arg("step").is_none() ? node->arg("step")
                                                                                 : ir::Argument::int_(1))};
  const auto& old = node->args();
  bool same = old.size() == args.size();
  for (size_t i = 0; same && i < args.size(); ++i) same = old[i].name == args[i].name && old[i].value == args[i].value;
  if (same) return false;
  node->set_args(std::move(args));
  return true;
}

bool run_normalize(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    changed |= normalize_dims(node);
    changed |= normalize_select_index(node);
    changed |= normalize_slice(node);
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_normalize_dims_and_slices_pass() {
  return std::make_shared<FunctionPass>(
      "normalize_dims_and_slices", "Makes negative dims non-negative and slice bounds explicit and in range.",
      run_normalize);
}

}  // namespace kiln::lowering
