// The one registration table of the torch executor's builtin operators. Adding an operator: implement it in
// builtin_symbolic.cpp or builtin_compat.cpp, declare it in builtin_ops.h, add one line here.

#include <string>
#include <unordered_map>

#include "runtime/builtin_ops.h"

namespace kiln::runtime {

const std::vector<BuiltinOp>& builtin_ops() {
  using enum BuiltinMode;
  static const std::vector<BuiltinOp> table = {
      // Python operators on SymInt / SymFloat / SymBool values.
      {"_operator.add", Always, py_add},
      {"_operator.sub", Always, py_sub},
      {"_operator.mul", Always, py_mul},
      {"_operator.truediv", Always, py_truediv},
      {"_operator.floordiv", Always, py_floordiv},
      {"_operator.mod", Always, py_mod},
      {"_operator.pow", Always, py_pow},
      {"_operator.neg", Always, py_neg},
      {"_operator.eq", Always, py_eq},
      {"_operator.ne", Always, py_ne},
      {"_operator.lt", Always, py_lt},
      {"_operator.le", Always, py_le},
      {"_operator.gt", Always, py_gt},
      {"_operator.ge", Always, py_ge},
      {"_operator.and_", Always, py_and},
      {"_operator.or_", Always, py_or},
      {"_operator.not_", Always, py_not},
      {"_operator.getitem", Always, py_getitem},
      {"operator.getitem", Always, py_getitem},
      {"math.ceil", Always, py_ceil},
      {"math.floor", Always, py_floor},
      {"math.trunc", Always, py_trunc},
      {"math.sqrt", Always, py_sqrt},
      {"torch.sym_float", Always, sym_float},
      {"torch.sym_int", Always, sym_int},
      {"torch.sym_max", Always, sym_max},
      {"torch.sym_min", Always, sym_min},
      {"torch.sym_not", Always, py_not},
      {"torch.sym_ite", Always, sym_ite},
      // Metadata queries, asserts and range constraints.
      {"aten.sym_size.int", Always, sym_size_int},
      {"aten.sym_size.default", Always, sym_size_default},
      {"aten.sym_stride.int", Always, sym_stride_int},
      {"aten.sym_numel.default", Always, sym_numel},
      {"aten.sym_storage_offset.default", Always, sym_storage_offset},
      {"aten._assert_scalar.default", Always, assert_scalar},
      {"aten._assert_async.default", Always, assert_async},
      {"aten._assert_async.msg", Always, assert_async},
      {"aten._functional_assert_async.msg", Always, functional_assert_async},
      {"aten._assert_tensor_metadata.default", Always, assert_tensor_metadata},
      {"aten.sym_constrain_range.default", Always, sym_constrain_range},
      {"aten.sym_constrain_range_for_size.default", Always, sym_constrain_range},
      {"aten._functional_sym_constrain_range.default", Always, functional_sym_constrain_range},
      {"aten._functional_sym_constrain_range_for_size.default", Always, functional_sym_constrain_range},
      // torch 2.x operators an older libtorch lacks.
      {"aten._native_batch_norm_legit_no_training.default", IfMissing, native_batch_norm_legit_no_training},
      {"aten._native_batch_norm_legit.default", IfMissing, native_batch_norm_legit},
      {"aten._native_batch_norm_legit.no_stats", IfMissing, native_batch_norm_legit_no_stats},
      {"aten.scaled_dot_product_attention.default", IfMissing, scaled_dot_product_attention},
      {"aten._scaled_dot_product_flash_attention_for_cpu.default", IfMissing, sdpa_flash_attention_for_cpu},
      {"aten.squeeze.dims", IfMissing, squeeze_dims},
      {"aten._safe_softmax.default", IfMissing, safe_softmax},
      {"aten.rms_norm.default", IfMissing, rms_norm},
      {"aten._unsafe_index.Tensor", IfMissing, unsafe_index},
      {"aten.any.dims", IfMissing, any_dims},
      {"aten.all.dims", IfMissing, all_dims},
  };
  return table;
}

const BuiltinOp* find_builtin_op(const std::string& op_name) {
  static const std::unordered_map<std::string, const BuiltinOp*> index = [] {
    std::unordered_map<std::string, const BuiltinOp*> map;
    for (const BuiltinOp& op : builtin_ops()) map.emplace(op.op, &op);
    return map;
  }();
  auto it = index.find(op_name);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace kiln::runtime
