#pragma once
// The decomposition functions, grouped by file; decomposition_table.cpp lists them.

#include "kiln/ir/graph.h"

namespace kiln::lowering::detail {

// activations.cpp
bool decompose_silu(ir::Graph& g, ir::Node* n);
bool decompose_hardswish(ir::Graph& g, ir::Node* n);
bool decompose_hardsigmoid(ir::Graph& g, ir::Node* n);
bool decompose_mish(ir::Graph& g, ir::Node* n);
bool decompose_relu6(ir::Graph& g, ir::Node* n);
bool decompose_hardtanh(ir::Graph& g, ir::Node* n);
bool decompose_glu(ir::Graph& g, ir::Node* n);
// softmax.cpp
bool decompose_log_softmax(ir::Graph& g, ir::Node* n);
// normalization.cpp
bool decompose_instance_norm(ir::Graph& g, ir::Node* n);
bool decompose_var_std(ir::Graph& g, ir::Node* n);
// weight_norm.cpp
bool decompose_weight_norm(ir::Graph& g, ir::Node* n);
// arithmetic.cpp
bool decompose_addcmul_addcdiv(ir::Graph& g, ir::Node* n);
bool decompose_baddbmm_addbmm(ir::Graph& g, ir::Node* n);
bool decompose_rsub(ir::Graph& g, ir::Node* n);
bool decompose_square(ir::Graph& g, ir::Node* n);
bool decompose_fmod(ir::Graph& g, ir::Node* n);
bool decompose_diff(ir::Graph& g, ir::Node* n);
// shape.cpp
bool decompose_transpose(ir::Graph& g, ir::Node* n);
bool decompose_stack(ir::Graph& g, ir::Node* n);
bool decompose_unbind(ir::Graph& g, ir::Node* n);
bool decompose_split(ir::Graph& g, ir::Node* n);
bool decompose_expand_as(ir::Graph& g, ir::Node* n);
// masks.cpp
bool decompose_masked_fill(ir::Graph& g, ir::Node* n);
bool decompose_tril_triu(ir::Graph& g, ir::Node* n);
// factories.cpp
bool decompose_full_like(ir::Graph& g, ir::Node* n);
bool decompose_new_full(ir::Graph& g, ir::Node* n);
bool decompose_zeros_ones(ir::Graph& g, ir::Node* n);
// scatter.cpp
bool decompose_slice_scatter(ir::Graph& g, ir::Node* n);
bool decompose_select_scatter(ir::Graph& g, ir::Node* n);
bool decompose_fill(ir::Graph& g, ir::Node* n);
bool decompose_copy(ir::Graph& g, ir::Node* n);
// index.cpp
bool decompose_index_tensor(ir::Graph& g, ir::Node* n);
bool decompose_slice_symbolic_end(ir::Graph& g, ir::Node* n);
// logical_reduce.cpp
bool decompose_any_all(ir::Graph& g, ir::Node* n);
// pooling.cpp
bool decompose_global_adaptive_avg_pool(ir::Graph& g, ir::Node* n);

}  // namespace kiln::lowering::detail
