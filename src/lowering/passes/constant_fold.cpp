// Constant folding: a node whose tensor inputs are all constants with data, of an op Kiln can compute on the
// host, becomes a new constant. Results larger than context.constant_fold_max_bytes stay computed at run
// time, so folding never blows up memory (an expand of a scalar to a huge tensor, say). Ops outside the
// supported set are skipped.

#include <algorithm>
#include <cmath>
#include <map>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"
#include "kiln/support/error.h"
#include "kiln/support/host_math.h"

namespace kiln::lowering {
namespace {

bool is_reshape_like(const ir::Node& node) {
  return detail::is_op_any(node, {"aten.reshape.default", "aten.view.default", "aten._unsafe_view.default",
                                  "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
                                  "aten.squeeze.default", "aten.flatten.using_ints", "aten.unflatten.int",
                                  "aten.clone.default", "aten.contiguous.default", "aten.alias.default",
                                  "aten.detach.default", "aten.lift_fresh_copy.default"});
}

const std::map<std::string, std::function<double(double)>>& unary_ops() {
  static const std::map<std::string, std::function<double(double)>> ops = {
      {"aten.neg.default", [](double x) { return -x; }},
      {"aten.sqrt.default", [](double x) { return std::sqrt(x); }},
      {"aten.rsqrt.default", [](double x) { return 1.0 / std::sqrt(x); }},
      {"aten.reciprocal.default", [](double x) { return 1.0 / x; }},
      {"aten.exp.default", [](double x) { return std::exp(x); }},
      {"aten.log.default", [](double x) { return std::log(x); }},
      {"aten.abs.default", [](double x) { return std::abs(x); }},
      {"aten._to_copy.default", [](double x) { return x; }},
  };
  return ops;
}

const std::map<std::string, std::function<double(double, double)>>& binary_ops() {
  static const std::map<std::string, std::function<double(double, double)>> ops = {
      {"aten.add", [](double a, double b) { return a + b; }},
      {"aten.sub", [](double a, double b) { return a - b; }},
      {"aten.mul", [](double a, double b) { return a * b; }},
      {"aten.div", [](double a, double b) { return a / b; }},
      {"aten.pow", [](double a, double b) { return std::pow(a, b); }},
  };
  return ops;
}

// The folded value of `node`, or an undefined tensor when the op is not supported here.
HostTensor evaluate(const ir::Node& node, const ir::TensorMeta& out_meta, const std::vector<int64_t>& out_sizes) {
  const DType out = out_meta.dtype;
  ir::Value* self_value = detail::tensor_arg(node, "self");
  const HostTensor self = self_value ? self_value->data() : HostTensor();
  const std::string target = node.target().to_string();
  if (is_reshape_like(node)) return self.to(out).reshaped(out_sizes);
  if (target == "aten.permute.default") {
    std::vector<int64_t> dims = node.arg("dims").as_ints();
    for (auto& d : dims) d = detail::normalize_dim(d, self.dim(), node);
    return host_permute(self, dims).to(out);
  }
  if (target == "aten.transpose.int" || target == "aten.t.default" || target == "aten.numpy_T.default") {
    std::vector<int64_t> dims(static_cast<size_t>(self.dim()));
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
    if (target == "aten.transpose.int") {
      std::swap(dims[static_cast<size_t>(detail::normalize_dim(node.arg("dim0").as_int(), self.dim(), node))],
                dims[static_cast<size_t>(detail::normalize_dim(node.arg("dim1").as_int(), self.dim(), node))]);
    } else {
      std::reverse(dims.begin(), dims.end());
    }
    return host_permute(self, dims).to(out);
  }
  if (target == "aten.expand.default") return host_expand(self, out_sizes).to(out);
  if (target == "aten.select.int") {
    const int64_t dim = detail::normalize_dim(node.arg("dim").as_int(), self.dim(), node);
    int64_t index = node.arg("index").as_int();
    const int64_t size = self.sizes()[static_cast<size_t>(dim)];
    if (index < 0) index += size;
    if (index < 0 || index >= size) return HostTensor();
    return host_slice(self, dim, index, index + 1, 1).to(out).reshaped(out_sizes);
  }
  if (target == "aten.slice.Tensor") {
    const int64_t dim = detail::normalize_dim(detail::int_arg(node, "dim", 0), self.dim(), node);
    const int64_t size = self.sizes()[static_cast<size_t>(dim)];
    auto clamp_bound = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size); };
    const int64_t start = clamp_bound(detail::int_arg(node, "start", 0));
    const int64_t end = clamp_bound(detail::int_arg(node, "end", size));
    const int64_t step = detail::int_arg(node, "step", 1);
    if (step <= 0) return HostTensor();
    return host_slice(self, dim, start, end, step).to(out);
  }
  if (target == "aten.cat.default") {
    std::vector<HostTensor> parts;
    for (ir::Value* v : node.arg("tensors").as_tensors()) {
      if (v->data().numel() > 0 || v->data().dim() == static_cast<int64_t>(out_sizes.size())) parts.push_back(v->data());
    }
    if (parts.empty()) return HostTensor();
    const int64_t dim = detail::normalize_dim(detail::int_arg(node, "dim", 0), parts[0].dim(), node);
    return host_cat(parts, dim, out);
  }
  if (auto it = unary_ops().find(target); it != unary_ops().end()) {
    if (target == "aten._to_copy.default" &&
        !(detail::arg_is_none(node, "layout") || node.arg("layout").as_layout() == ir::Layout::Strided)) {
      return HostTensor();
    }
    return host_unary(self, out, it->second);
  }
  if (auto it = binary_ops().find(node.target().packet()); it != binary_ops().end()) {
    const std::string& overload = node.target().overload;
    if (overload != "Tensor" && overload != "Scalar" && overload != "Tensor_Scalar" && overload != "Tensor_Tensor") {
      return HostTensor();
    }
    const ir::Argument& other_arg = node.has_arg("other") ? node.arg("other") : node.arg("exponent");
    HostTensor other = other_arg.kind() == ir::Argument::Kind::Tensor
                           ? other_arg.as_tensor()->data()
                           : HostTensor::from_floats({0.0f}, {}).to(DType::Float64);
    if (other_arg.kind() != ir::Argument::Kind::Tensor) other.set_from_double(0, other_arg.as_float());
    const double alpha = detail::float_arg(node, "alpha", 1.0);
    auto fn = it->second;
    if (alpha != 1.0) {
      const bool add = node.target().name == "add";
      fn = [alpha, add](double a, double b) { return add ? a + alpha * b : a - alpha * b; };
    }
    return host_binary(self, other, out, fn);
  }
  return HostTensor();
}

bool run_constant_fold(ir::Graph& graph, const PassContext& context) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (node->outputs().size() != 1 || !node->output(0)->is_tensor() || detail::has_side_effects(*node) ||
        detail::is_random(*node)) {
      continue;
    }
    const std::vector<ir::Value*> inputs = node->inputs();
    if (inputs.empty()) continue;  // factory ops (full, arange) stay: they are cheap and shape-dependent
    bool foldable = true;
    for (ir::Value* v : inputs) {
      foldable &= v->role() == ir::ValueRole::Constant && v->is_tensor() && v->data().defined();
    }
    if (!foldable) continue;
    const ir::TensorMeta& meta = node->output(0)->meta();
    const auto sizes = meta.static_sizes();
    if (!sizes) continue;
    const int64_t bytes = checked_numel(*sizes) * static_cast<int64_t>(dtype_size(meta.dtype));
    if (bytes > context.constant_fold_max_bytes) continue;
    HostTensor result;
    try {
      result = evaluate(*node, meta, *sizes);
    } catch (const Error&) {
      continue;  // inconsistent metadata or arguments: leave the node for run time, which reports it
    }
    if (!result.defined() || result.sizes() != *sizes || result.dtype() != meta.dtype) continue;
    ir::Value* folded = detail::tensor_constant(graph, std::move(result), node->output(0)->name() + "_folded");
    detail::replace_node(graph, node, {folded});
    for (ir::Value* v : inputs) detail::erase_if_dead_constant(graph, v);
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_constant_fold_pass() {
  return std::make_shared<FunctionPass>(
      "constant_fold", "Evaluates weight-only subgraphs (reshape/permute/arith/cast/slice/cat) into constants, "
      "up to a size cap.",
      run_constant_fold);
}

}  // namespace kiln::lowering
