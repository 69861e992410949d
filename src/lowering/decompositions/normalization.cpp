// instance_norm → group_norm with one group per channel; var/std/var_mean/std_mean → mean, sub, mul, sum.

#include <numeric>

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

// instance_norm with input statistics normalizes each (sample, channel) over the spatial dims: exactly
// group_norm with C groups (which the engine keeps whole). Needs a static channel count.
bool decompose_instance_norm(ir::Graph& g, ir::Node* n) {
  if (!bool_arg(*n, "use_input_stats", true)) return false;
  ir::Value* x = tensor_arg(*n, "input");
  if (x->meta().rank() < 3) return false;
  auto channels = x->meta().sizes[1].as_int();
  if (!channels) return false;
  Builder b(g, n);
  ir::Value* weight = tensor_arg(*n, "weight");
  ir::Value* bias = tensor_arg(*n, "bias");
  ir::Value* out = b.op("aten.group_norm.default",
                        {named("input", Argument::tensor(x)), named("num_groups", Argument::int_(*channels)),
                         named("weight", weight ? Argument::tensor(weight) : Argument::none()),
                         named("bias", bias ? Argument::tensor(bias) : Argument::none()),
                         named("eps", Argument::float_(float_arg(*n, "eps", 1e-5))),
                         named("cudnn_enabled", Argument::bool_(true))},
                        n->output(0)->meta(), "group_norm");
  replace_node(g, n, {out});
  return true;
}

// var = sum((x - mean(x))^2) / (N - correction) over the reduced dims (N static), std = sqrt(var).
bool decompose_var_std(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t rank = x->meta().rank();
  std::vector<int64_t> dims;
  const ir::Argument* dim_arg = n->find_arg("dim");
  if (dim_arg == nullptr || dim_arg->is_none() || dim_arg->as_ints().empty()) {
    dims.resize(static_cast<size_t>(rank));
    std::iota(dims.begin(), dims.end(), 0);
  } else {
    for (int64_t d : dim_arg->as_ints()) dims.push_back(normalize_dim(d, rank, *n));
  }
  int64_t count = 1;
  for (int64_t d : dims) {
    auto size = x->meta().sizes[static_cast<size_t>(d)].as_int();
    if (!size) return false;
    count *= *size;
  }
  double correction = 1.0;
  if (n->target().overload == "correction") {
    correction = float_arg(*n, "correction", 1.0);
  } else {
    correction = bool_arg(*n, "unbiased", true) ? 1.0 : 0.0;
  }
  const bool keepdim = bool_arg(*n, "keepdim", false);
  const std::string& name = n->target().name;
  const bool is_std = name == "std" || name == "std_mean";
  const bool with_mean = name == "var_mean" || name == "std_mean";
  if (!is_floating(x->meta().dtype)) return false;

  Builder b(g, n);
  ir::Value* mean = b.reduce("aten.mean.dim", x, dims, true);
  ir::Value* centered = b.sub(x, mean);
  ir::Value* sum = b.reduce("aten.sum.dim_IntList", b.mul(centered, centered), dims, keepdim);
  // N - correction <= 0 divides by zero, as torch does (inf or nan).
  ir::Value* result = b.div_scalar(sum, std::max(static_cast<double>(count) - correction, 0.0));
  if (is_std) result = b.unary("aten.sqrt.default", result);
  std::vector<ir::Value*> outputs = {result};
  if (with_mean) outputs.push_back(keepdim ? mean : b.reduce("aten.mean.dim", x, dims, false));
  replace_node(g, n, outputs);
  return true;
}

}  // namespace kiln::lowering::detail
