#pragma once
// Factories of the built-in lowering passes (one source file each under src/lowering/passes/).

#include <memory>

#include "kiln/lowering/pass.h"

namespace kiln::lowering {

/// Removes _assert_tensor_metadata, _assert_scalar, _assert_async and sym_constrain_range* nodes.
std::shared_ptr<Pass> make_remove_assert_nodes_pass();
/// Removes detach, alias and lift_fresh_copy (value-identity ops).
std::shared_ptr<Pass> make_remove_detach_pass();
/// Removes dropout (and its feature/alpha forms) when compiling for inference or when train is false.
std::shared_ptr<Pass> make_remove_dropout_pass();
/// Rewrites in-place ops (add_, relu_, copy_, ...) into their functional forms; throws
/// kiln::Error(Unsupported) when the mutated tensor is a graph input or a constant.
std::shared_ptr<Pass> make_functionalize_inplace_pass();
/// Rewrites to.dtype / to.dtype_layout / to.device / to.other / type_as into _to_copy.
std::shared_ptr<Pass> make_canonicalize_to_copy_pass();
/// Rewrites conv1d/2d/3d and conv_transpose* into convolution, and the batch norm forms into
/// batch_norm(training=False) in inference.
std::shared_ptr<Pass> make_canonicalize_training_ir_pass();
/// Replaces max_pool{1,2,3}d_with_indices by max_pool{1,2,3}d when the indices are unused.
std::shared_ptr<Pass> make_replace_max_pool_with_indices_pass();
/// Rewrites view/_unsafe_view/flatten/unflatten/view_copy into reshape, merges reshape chains.
std::shared_ptr<Pass> make_canonicalize_views_pass();
/// Rewrites addmm(bias, x, permute(W, [1, 0])) and mm(x, permute(W, [1, 0])) with a constant W (Core ATen's
/// form of a linear layer, also with the reshapes around it for inputs of rank > 2) into aten.linear, and
/// addmm(bias, x, W) / mm(x, W) with a constant W used as it is into matmul(x, W) + bias.
std::shared_ptr<Pass> make_canonicalize_linear_pass();
/// Rewrites matmul(softmax(matmul(q, k^T) * c + mask, -1), v) written out (eager attention) into
/// aten.scaled_dot_product_attention(q, k, v, mask, scale=c).
std::shared_ptr<Pass> make_fuse_attention_pass();
/// Gives scaled_dot_product_attention the smallest boolean mask with the same meaning: an expand of the mask dropped,
/// an AND with a provably all-true operand (transformers' `q_idx >= 0` over an arange) reduced to the other operand.
std::shared_ptr<Pass> make_simplify_attention_mask_pass();
/// Rewrites 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) written out in aten arithmetic into
/// aten.gelu(x, approximate='tanh').
std::shared_ptr<Pass> make_fuse_gelu_tanh_pass();
/// Rewrites x * rsqrt(mean(x^2, trailing dims, keepdim) + eps) written out in aten arithmetic (LlamaRMSNorm)
/// into aten.rms_norm, taking a following multiply by a constant weight of the normalized shape with it.
std::shared_ptr<Pass> make_fuse_rms_norm_pass();
/// transformers' repeat_kv (reshape(expand(unsqueeze(x, 2)))) of an attention's key and value read as
/// enable_gqa=True on the un-repeated tensors.
std::shared_ptr<Pass> make_fuse_grouped_query_attention_pass();
/// Rotary embeddings' rotate_half, cat([-x[..., h:], x[..., :h]], -1), as index_select(x) times a sign.
std::shared_ptr<Pass> make_fuse_rotate_half_pass();
/// Removes no-op clone/contiguous/_to_copy/reshape/expand nodes.
std::shared_ptr<Pass> make_remove_noop_ops_pass();
/// Quantize/dequantize programs: dequantized constant weights folded, quantize -> dequantize pairs as
/// fake_quantize_per_*_affine, other quantize/dequantize nodes as elementwise ops (torch's arithmetic).
std::shared_ptr<Pass> make_lower_quantize_dequantize_pass();
/// Applies the decomposition table (see decompositions.h).
std::shared_ptr<Pass> make_decompose_pass();
/// Folds an inference batch norm with constant statistics into the preceding convolution's weights.
std::shared_ptr<Pass> make_fold_batch_norm_into_conv_pass();
/// Moves a zero constant pad of the spatial dims into the consuming convolution's padding.
std::shared_ptr<Pass> make_fuse_pad_into_convolution_pass();
/// Evaluates nodes whose inputs are all constants (for the ops Kiln can compute on the host).
std::shared_ptr<Pass> make_constant_fold_pass();
/// Makes negative dims non-negative and slice bounds explicit and in range.
std::shared_ptr<Pass> make_normalize_dims_and_slices_pass();
/// Merges identical pure nodes (common-subexpression elimination).
std::shared_ptr<Pass> make_cse_pass();
/// Removes pure nodes none of whose outputs is used.
std::shared_ptr<Pass> make_remove_num_users_is_0_nodes_pass();
/// Inserts a clone where a graph input is also a graph output.
std::shared_ptr<Pass> make_repair_input_as_output_pass();

}  // namespace kiln::lowering
