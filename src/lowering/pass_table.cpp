// The one registration table of the default lowering passes, in the order they run. Adding a pass: write
// src/lowering/passes/<name>.cpp with its factory (declared in kiln/lowering/passes.h), its test, and one
// line here.

#include "kiln/lowering/pass_manager.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {

const std::vector<PassRegistration>& default_pass_table() {
  using S = PassStage;
  static const std::vector<PassRegistration> table = {
      // Pre-lowering: bring the training IR and Core ATen forms to one canonical, functional opset.
      {S::PreLowering, make_remove_assert_nodes_pass},
      {S::PreLowering, make_functionalize_inplace_pass},
      {S::PreLowering, make_remove_detach_pass},
      {S::PreLowering, make_remove_dropout_pass},
      {S::PreLowering, make_canonicalize_to_copy_pass},
      {S::PreLowering, make_canonicalize_training_ir_pass},
      {S::PreLowering, make_replace_max_pool_with_indices_pass},
      {S::PreLowering, make_canonicalize_views_pass},
      {S::PreLowering, make_canonicalize_linear_pass},
      {S::PreLowering, make_fuse_gelu_tanh_pass},
      {S::PreLowering, make_remove_noop_ops_pass},
      // Post-lowering: decompositions, weight folding and cleanup.
      {S::PostLowering, make_lower_quantize_dequantize_pass},
      {S::PostLowering, make_decompose_pass},
      {S::PostLowering, make_fuse_attention_pass},
      {S::PostLowering, make_simplify_attention_mask_pass},
      {S::PostLowering, make_fold_batch_norm_into_conv_pass},
      {S::PostLowering, make_fuse_pad_into_convolution_pass},
      {S::PostLowering, make_constant_fold_pass},
      {S::PostLowering, make_fuse_rms_norm_pass},
      {S::PostLowering, make_normalize_dims_and_slices_pass},
      {S::PostLowering, make_canonicalize_views_pass},
      {S::PostLowering, make_remove_noop_ops_pass},
      {S::PostLowering, make_fuse_grouped_query_attention_pass},
      {S::PostLowering, make_fuse_rotate_half_pass},
      {S::PostLowering, make_cse_pass},
      {S::PostLowering, make_remove_num_users_is_0_nodes_pass},
      {S::PostLowering, make_repair_input_as_output_pass},
  };
  return table;
}

}  // namespace kiln::lowering
