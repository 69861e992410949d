// Canonicalizes the high-level training-IR forms into the forms converters take:
//  - conv1d/conv2d/conv3d (including padding="same"/"valid"), conv_transpose1d/2d/3d and _convolution become
//    aten.convolution.default with every argument explicit;
//  - in inference, batch_norm runs with training=False, and _native_batch_norm_legit_no_training,
//    _native_batch_norm_legit and native_batch_norm (when their saved statistics are unused) become
//    aten.batch_norm.default.

#include "../rewrite.h"
#include "kiln/lowering/passes.h"
#include "kiln/support/error.h"

namespace kiln::lowering {
namespace {

using detail::named;
using ir::Argument;

// An int-list argument expanded to `n` entries (a single value repeats), or `fallback` repeated when absent.
std::optional<std::vector<int64_t>> expand_list(const ir::Node& node, const std::string& name, size_t n,
                                                int64_t fallback) {
  const Argument* a = node.find_arg(name);
  if (a == nullptr || a->is_none()) return std::vector<int64_t>(n, fallback);
  if (a->kind() == Argument::Kind::Int) return std::vector<int64_t>(n, a->as_int());
  std::vector<int64_t> v = a->as_ints();
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n) return std::nullopt;
  return v;
}

bool rewrite_convolution(ir::Graph& graph, ir::Node* node) {
  const std::string& name = node->target().name;
  const bool transposed = name.rfind("conv_transpose", 0) == 0;
  const bool underscore = detail::is_op(*node, "aten._convolution.default");
  ir::Value* input = detail::tensor_arg(*node, "input");
  ir::Value* weight = detail::tensor_arg(*node, "weight");
  if (input == nullptr || weight == nullptr || weight->meta().rank() < 3) return false;
  const size_t n = static_cast<size_t>(weight->meta().rank() - 2);
  auto stride = expand_list(*node, "stride", n, 1);
  auto dilation = expand_list(*node, "dilation", n, 1);
  auto output_padding = expand_list(*node, "output_padding", n, 0);
  std::optional<std::vector<int64_t>> padding;
  const Argument* pad_arg = node->find_arg("padding");
  if (pad_arg != nullptr && pad_arg->kind() == Argument::Kind::String) {
    if (pad_arg->as_string() == "valid") {
      padding = std::vector<int64_t>(n, 0);
    } else if (pad_arg->as_string() == "same" && stride && *stride == std::vector<int64_t>(n, 1)) {
      padding = std::vector<int64_t>(n, 0);
      for (size_t i = 0; i < n; ++i) {
        auto k = weight->meta().sizes[2 + i].as_int();
        if (!k || !dilation) return false;
        const int64_t total = (*dilation)[i] * (*k - 1);
        // An odd total needs asymmetric padding, which convolution cannot state: leave the node as is.
        if (total % 2 != 0) return false;
        (*padding)[i] = total / 2;
      }
    } else {
      return false;
    }
  } else {
    padding = expand_list(*node, "padding", n, 0);
  }
  if (!stride || !padding || !dilation || !output_padding) return false;
  const bool is_transposed = underscore ? detail::bool_arg(*node, "transposed", false) : transposed;
  ir::Value* bias = detail::tensor_arg(*node, "bias");
  std::vector<ir::NamedArgument> args = {
      named("input", Argument::tensor(input)),
      named("weight", Argument::tensor(weight)),
      named("bias", bias ? Argument::tensor(bias) : Argument::none()),
      named("stride", Argument::ints(*stride)),
      named("padding", Argument::ints(*padding)),
      named("dilation", Argument::ints(*dilation)),
      named("transposed", Argument::bool_(is_transposed)),
      named("output_padding", Argument::ints(*output_padding)),
      named("groups", Argument::int_(detail::int_arg(*node, "groups", 1)))};
  ir::Value* out = detail::emit(graph, node, "aten.convolution.default", std::move(args), node->output(0)->meta(),
                                "convolution");
  detail::replace_node(graph, node, {out});
  return true;
}

bool rewrite_batch_norm(ir::Graph& graph, ir::Node* node, const PassContext& context) {
  if (!context.inference_mode) return false;
  ir::Value* mean = detail::tensor_arg(*node, "running_mean");
  ir::Value* var = detail::tensor_arg(*node, "running_var");
  if (mean == nullptr || var == nullptr) return false;  // no running statistics: batch statistics are needed
  if (detail::is_op(*node, "aten.batch_norm.default")) return false;  // already the canonical form
  for (size_t i = 1; i < node->outputs().size(); ++i) {
    ir::Value* saved = node->output(i);
    if (graph.is_output(saved) || !graph.users(saved).empty()) return false;
  }
  ir::Value* weight = detail::tensor_arg(*node, "weight");
  ir::Value* bias = detail::tensor_arg(*node, "bias");
  std::vector<ir::NamedArgument> args = {
      named("input", Argument::tensor(detail::tensor_arg(*node, "input"))),
      named("weight", weight ? Argument::tensor(weight) : Argument::none()),
      named("bias", bias ? Argument::tensor(bias) : Argument::none()),
      named("running_mean", Argument::tensor(mean)),
      named("running_var", Argument::tensor(var)),
      named("training", Argument::bool_(false)),
      named("momentum", Argument::float_(detail::float_arg(*node, "momentum", 0.1))),
      named("eps", Argument::float_(detail::float_arg(*node, "eps", 1e-5))),
      named("cudnn_enabled", Argument::bool_(true))};
  ir::Value* out = detail::emit(graph, node, "aten.batch_norm.default", std::move(args), node->output(0)->meta(),
                                "batch_norm");
  detail::replace_node(graph, node, {out});
  return true;
}

bool run_canonicalize_training_ir(ir::Graph& graph, const PassContext& context) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (detail::is_op_any(*node, {"aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default",
                                  "aten.conv1d.padding", "aten.conv2d.padding", "aten.conv3d.padding",
                                  "aten.conv_transpose1d.default", "aten.conv_transpose2d.input",
                                  "aten.conv_transpose3d.input", "aten._convolution.default"})) {
      changed |= rewrite_convolution(graph, node);
    } else if (detail::is_op_any(*node, {"aten.batch_norm.default",
                                         "aten._native_batch_norm_legit_no_training.default",
                                         "aten._native_batch_norm_legit.default", "aten.native_batch_norm.default"})) {
      // Training-mode batch norm normalizes with the batch's statistics (and updates the running ones): it is
      // no inference batch norm, whatever the mode. It stays as exported, and runs in PyTorch (the converter's
      // validator refuses it) with the result torch gives.
      if (!detail::is_op(*node, "aten._native_batch_norm_legit_no_training.default") &&
          detail::bool_arg(*node, "training", false)) {
        continue;
      }
      changed |= rewrite_batch_norm(graph, node, context);
    }
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_canonicalize_training_ir_pass() {
  return std::make_shared<FunctionPass>(
      "canonicalize_training_ir", "Rewrites conv1d/2d/3d/conv_transpose* into convolution and the batch norm "
      "forms with training=False into batch_norm(training=False) in inference (training-mode batch norm is kept: "
      "it runs in PyTorch).",
      run_canonicalize_training_ir);
}

}  // namespace kiln::lowering
