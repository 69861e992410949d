#pragma once
// Decoding of the small torch.export serialization types shared by the graph and the payload configs:
// dtype codes, devices, SymInt unions and TensorMeta.

#include <map>
#include <string>

#include "frontend/json_reader.h"
#include "kiln/ir/tensor_meta.h"

namespace kiln::frontend {

/// Export hints of shape symbols, collected while decoding ({"as_expr": {"expr_str": "Symbol('s77', ...)",
/// "hint": {"as_int": 2}}} gives s77 -> 2).
using SymbolHints = std::map<std::string, int64_t>;

/// A ScalarType code (schema.py ScalarType) as a DType; unknown codes are an error naming the path.
DType decode_dtype(const JsonRef& code);
/// {"type": "cpu", "index": null}.
ir::Device decode_device(const JsonRef& device);
/// {"as_int": 3} or {"as_expr": {"expr_str": <sympy srepr>, "hint": {...}}}. Hints of lone symbols are added
/// to `hints` when given.
ir::SymExpr decode_sym_int(const JsonRef& sym_int, SymbolHints* hints);
/// A serialized TensorMeta. Layouts other than Strided are kiln::Error(Unsupported).
ir::TensorMeta decode_tensor_meta(const JsonRef& meta, SymbolHints* hints);
/// A Layout / MemoryFormat code, range-checked.
ir::Layout decode_layout(const JsonRef& code);
ir::MemoryFormat decode_memory_format(const JsonRef& code);

}  // namespace kiln::frontend
