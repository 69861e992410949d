// The one registration table of decompositions, and the keep-whole set. Adding a decomposition: write the
// function (in the file of its family), its test, and one line here.

#include "decompositions_internal.h"
#include "kiln/lowering/decompositions.h"

namespace kiln::lowering {

const std::vector<Decomposition>& decompositions() {
  using namespace detail;  // NOLINT(google-build-using-namespace)
  static const std::vector<Decomposition> table = {
      {"log_softmax", {"aten.log_softmax.int", "aten._log_softmax.default"}, decompose_log_softmax},
      {"silu", {"aten.silu.default"}, decompose_silu},
      {"hardswish", {"aten.hardswish.default"}, decompose_hardswish},
      {"hardsigmoid", {"aten.hardsigmoid.default"}, decompose_hardsigmoid},
      {"mish", {"aten.mish.default"}, decompose_mish},
      {"relu6", {"aten.relu6.default"}, decompose_relu6},
      {"hardtanh", {"aten.hardtanh.default"}, decompose_hardtanh},
      {"glu", {"aten.glu.default"}, decompose_glu},
      {"instance_norm", {"aten.instance_norm.default"}, decompose_instance_norm},
      {"var_std",
       {"aten.var.correction", "aten.var.dim", "aten.var.default", "aten.std.correction", "aten.std.dim",
        "aten.std.default", "aten.var_mean.correction", "aten.var_mean.dim", "aten.std_mean.correction",
        "aten.std_mean.dim"},
       decompose_var_std},
      {"addcmul_addcdiv", {"aten.addcmul.default", "aten.addcdiv.default"}, decompose_addcmul_addcdiv},
      {"baddbmm_addbmm", {"aten.baddbmm.default", "aten.addbmm.default"}, decompose_baddbmm_addbmm},
      {"rsub", {"aten.rsub.Tensor", "aten.rsub.Scalar"}, decompose_rsub},
      {"square", {"aten.square.default"}, decompose_square},
      {"transpose", {"aten.transpose.int", "aten.t.default", "aten.numpy_T.default"}, decompose_transpose},
      {"stack", {"aten.stack.default"}, decompose_stack},
      {"unbind", {"aten.unbind.int"}, decompose_unbind},
      {"split", {"aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default"}, decompose_split},
      {"expand_as", {"aten.expand_as.default"}, decompose_expand_as},
      {"masked_fill", {"aten.masked_fill.Scalar", "aten.masked_fill.Tensor"}, decompose_masked_fill},
      {"tril_triu", {"aten.tril.default", "aten.triu.default"}, decompose_tril_triu},
      {"full_like",
       {"aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default"}, decompose_full_like},
      {"new_full",
       {"aten.new_full.default", "aten.new_zeros.default", "aten.new_ones.default"}, decompose_new_full},
      {"zeros_ones", {"aten.zeros.default", "aten.ones.default"}, decompose_zeros_ones},
      {"slice_scatter", {"aten.slice_scatter.default"}, decompose_slice_scatter},
      {"select_scatter", {"aten.select_scatter.default"}, decompose_select_scatter},
      {"fill", {"aten.fill.Scalar", "aten.fill.Tensor"}, decompose_fill},
      {"copy", {"aten.copy.default"}, decompose_copy},
      {"fmod", {"aten.fmod.Scalar", "aten.fmod.Tensor"}, decompose_fmod},
      {"diff", {"aten.diff.default"}, decompose_diff},
      {"weight_norm",
       {"aten._weight_norm.default", "aten._weight_norm_interface.default"},
       decompose_weight_norm},
      {"index_several", {"aten.index.Tensor"}, decompose_index_tensor},
      {"slice_symbolic_end", {"aten.slice.Tensor"}, decompose_slice_symbolic_end},
      {"any_all", {"aten.any.dim", "aten.any.dims", "aten.any.default", "aten.all.dim", "aten.all.default"},
       decompose_any_all},
      {"global_adaptive_avg_pool",
       {"aten.adaptive_avg_pool1d.default", "aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default",
        "aten.adaptive_avg_pool3d.default", "aten._adaptive_avg_pool3d.default"},
       decompose_global_adaptive_avg_pool},
  };
  return table;
}

const std::set<std::string>& keep_whole_ops() {
  static const std::set<std::string> ops = {
      "aten.softmax", "aten._softmax", "aten.linear", "aten.matmul", "aten.layer_norm", "aten.native_layer_norm",
      "aten.scaled_dot_product_attention", "aten.batch_norm", "aten._native_batch_norm_legit_no_training",
      "aten.group_norm", "aten.native_group_norm", "aten.convolution", "aten.conv1d", "aten.conv2d",
      "aten.conv3d", "aten.conv_transpose1d", "aten.conv_transpose2d", "aten.conv_transpose3d",
      "aten.upsample_nearest1d", "aten.upsample_nearest2d", "aten.upsample_nearest3d", "aten.upsample_linear1d",
      "aten.upsample_bilinear2d", "aten.upsample_bicubic2d", "aten.upsample_trilinear3d"};
  return ops;
}

bool should_decompose(const ir::Node& node, const PassContext& context) {
  if (context.enable_experimental_decompositions) return true;
  if (keep_whole_ops().count(node.target().packet()) > 0) return false;
  return !context.has_converter || !context.has_converter(node);
}

}  // namespace kiln::lowering
