#include "frontend/serde.h"

#include <limits>

namespace kiln::frontend {

DType decode_dtype(const JsonRef& code) {
  int64_t c = code.as_int();
  if (c < std::numeric_limits<int>::min() || c > std::numeric_limits<int>::max()) {
    throw code.error("unknown dtype code " + std::to_string(c));
  }
  try {
    return dtype_from_torch_code(static_cast<int>(c));
  } catch (const Error& e) {
    throw code.wrap(e);
  }
}

ir::Device decode_device(const JsonRef& device) {
  ir::Device out;
  out.type = device.at("type").as_string();
  if (out.type.empty()) throw device.error("empty device type");
  if (auto index = device.find("index")) {
    int64_t i = index->as_int();
    if (i < -1 || i > std::numeric_limits<int>::max()) throw index->error("bad device index " + std::to_string(i));
    out.index = static_cast<int>(i);
  }
  return out;
}

ir::SymExpr decode_sym_int(const JsonRef& sym_int, SymbolHints* hints) {
  auto [kind, value] = sym_int.union_member();
  if (kind == "as_int") return ir::SymExpr(value.as_int());
  if (kind != "as_expr") throw sym_int.error("unknown SymInt kind '" + kind + "'");
  const JsonRef expr_str = value.at("expr_str");
  ir::SymExpr expr;
  try {
    expr = ir::SymExpr::parse_srepr(expr_str.as_string());
  } catch (const Error& e) {
    throw expr_str.wrap(e);
  }
  if (hints != nullptr && expr.kind() == ir::SymExpr::Kind::Symbol) {
    if (auto hint = value.find("hint")) {
      auto [hint_kind, hint_value] = hint->union_member();
      if (hint_kind == "as_int") (*hints)[expr.symbol_name()] = hint_value.as_int();
    }
  }
  return expr;
}

ir::Layout decode_layout(const JsonRef& code) {
  int64_t c = code.as_int();
  if (c < 0 || c > static_cast<int64_t>(ir::Layout::Strided)) throw code.error("unknown layout code " + std::to_string(c));
  return static_cast<ir::Layout>(c);
}

ir::MemoryFormat decode_memory_format(const JsonRef& code) {
  int64_t c = code.as_int();
  if (c < 0 || c > static_cast<int64_t>(ir::MemoryFormat::Preserve)) {
    throw code.error("unknown memory format code " + std::to_string(c));
  }
  return static_cast<ir::MemoryFormat>(c);
}

ir::TensorMeta decode_tensor_meta(const JsonRef& meta, SymbolHints* hints) {
  ir::TensorMeta out;
  out.dtype = decode_dtype(meta.at("dtype"));
  for (const JsonRef& s : meta.at("sizes").elements()) out.sizes.push_back(decode_sym_int(s, hints));
  if (auto strides = meta.find("strides")) {
    for (const JsonRef& s : strides->elements()) out.strides.push_back(decode_sym_int(s, hints));
    if (out.strides.size() != out.sizes.size()) {
      throw strides->error("has " + std::to_string(out.strides.size()) + " strides for " +
                           std::to_string(out.sizes.size()) + " sizes");
    }
  }
  if (auto offset = meta.find("storage_offset")) out.storage_offset = decode_sym_int(*offset, hints);
  if (auto device = meta.find("device")) out.device = decode_device(*device);
  if (auto requires_grad = meta.find("requires_grad")) out.requires_grad = requires_grad->as_bool();
  if (auto layout = meta.find("layout")) {
    ir::Layout l = decode_layout(*layout);
    if (l != ir::Layout::Strided) {
      throw layout->unsupported("tensor layout code " + std::to_string(static_cast<int>(l)) +
                                " is not supported (Kiln handles strided tensors only)");
    }
  }
  return out;
}

}  // namespace kiln::frontend
