#include "frontend/serde.h"

#include <limits>

#include "kiln/support/host_tensor.h"
#include "kiln/support/limits.h"

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
  const JsonRef type = device.at("type");
  int64_t index = -1;
  if (auto given = device.find("index")) index = given->as_int();
  try {
    return ir::Device::make(type.as_string(), index);
  } catch (const Error& e) {
    throw device.wrap(e);
  }
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
      if (hint_kind == "as_int") {
        int64_t h = hint_value.as_int();
        if (h < 0 || h > (int64_t{1} << 40)) throw hint_value.error("implausible hint " + std::to_string(h));
        auto [it, inserted] = hints->emplace(expr.symbol_name(), h);
        if (!inserted && it->second != h) {
          throw hint_value.error("hint " + std::to_string(h) + " for symbol '" + expr.symbol_name() +
                                 "' contradicts the earlier hint " + std::to_string(it->second));
        }
      }
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

namespace {
// Sizes, strides and offsets beyond kMaxDimExtent are corrupt (no tensor has 2^40 elements along one
// dimension), and rejecting them keeps later shape arithmetic free of int64 overflow.
constexpr int64_t kMaxExtent = kMaxDimExtent;

void check_extent(const ir::SymExpr& e, const JsonRef& where, const char* what) {
  if (auto v = e.as_int(); v && (*v < 0 || *v > kMaxExtent)) {
    throw where.error(std::string("implausible ") + what + " " + std::to_string(*v));
  }
}
}  // namespace

ir::TensorMeta decode_tensor_meta(const JsonRef& meta, SymbolHints* hints) {
  ir::TensorMeta out;
  out.dtype = decode_dtype(meta.at("dtype"));
  const JsonRef sizes = meta.at("sizes");
  for (const JsonRef& s : sizes.elements()) {
    out.sizes.push_back(decode_sym_int(s, hints));
    check_extent(out.sizes.back(), s, "size");
  }
  if (auto static_sizes = out.static_sizes()) (void)checked_numel(*static_sizes);
  const JsonRef strides = meta.at("strides");
  for (const JsonRef& s : strides.elements()) {
    out.strides.push_back(decode_sym_int(s, hints));
    check_extent(out.strides.back(), s, "stride");
  }
  if (out.strides.size() != out.sizes.size()) {
    throw strides.error("has " + std::to_string(out.strides.size()) + " strides for " +
                        std::to_string(out.sizes.size()) + " sizes");
  }
  const JsonRef offset = meta.at("storage_offset");
  out.storage_offset = decode_sym_int(offset, hints);
  check_extent(out.storage_offset, offset, "storage offset");
  out.device = decode_device(meta.at("device"));
  out.requires_grad = meta.at("requires_grad").as_bool();
  const JsonRef layout = meta.at("layout");
  ir::Layout l = decode_layout(layout);
  if (l != ir::Layout::Strided) {
    throw layout.unsupported("tensor layout code " + std::to_string(static_cast<int>(l)) +
                             " is not supported (Kiln handles strided tensors only)");
  }
  return out;
}

}  // namespace kiln::frontend
