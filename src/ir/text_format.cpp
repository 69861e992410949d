// Spellings shared by the IR text printer, the parser and Argument::to_string.

#include "text_format.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "kiln/ir/text.h"

namespace kiln::ir::textfmt {

bool is_plain_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  }
  return true;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          static const char* hex = "0123456789abcdef";
          out += "\\x";
          out += hex[(static_cast<unsigned char>(c) >> 4) & 0xf];
          out += hex[static_cast<unsigned char>(c) & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string value_ref(const std::string& name) {
  return is_plain_name(name) ? "%" + name : "%" + quote(name);
}

namespace {
std::string finish_float(std::string s) {
  if (s.find_first_of(".eE") == std::string::npos && s.find("inf") == std::string::npos &&
      s.find("nan") == std::string::npos) {
    s += ".0";
  }
  return s;
}
}  // namespace

std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return finish_float(std::string(buf, res.ptr));
}

std::string format_float32(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return finish_float(std::string(buf, res.ptr));
}

namespace {
constexpr std::pair<Layout, const char*> kLayouts[] = {
    {Layout::Unknown, "unknown"},      {Layout::SparseCoo, "sparse_coo"}, {Layout::SparseCsr, "sparse_csr"},
    {Layout::SparseCsc, "sparse_csc"}, {Layout::SparseBsr, "sparse_bsr"}, {Layout::SparseBsc, "sparse_bsc"},
    {Layout::Mkldnn, "mkldnn"},        {Layout::Strided, "strided"}};
constexpr std::pair<MemoryFormat, const char*> kFormats[] = {
    {MemoryFormat::Unknown, "unknown"},
    {MemoryFormat::Contiguous, "contiguous"},
    {MemoryFormat::ChannelsLast, "channels_last"},
    {MemoryFormat::ChannelsLast3d, "channels_last_3d"},
    {MemoryFormat::Preserve, "preserve"}};
}  // namespace

const char* layout_name(Layout l) {
  for (const auto& [k, n] : kLayouts) {
    if (k == l) return n;
  }
  return "unknown";
}
std::optional<Layout> layout_from_name(std::string_view name) {
  for (const auto& [k, n] : kLayouts) {
    if (name == n) return k;
  }
  return std::nullopt;
}
const char* memory_format_name(MemoryFormat m) {
  for (const auto& [k, n] : kFormats) {
    if (k == m) return n;
  }
  return "unknown";
}
std::optional<MemoryFormat> memory_format_from_name(std::string_view name) {
  for (const auto& [k, n] : kFormats) {
    if (name == n) return k;
  }
  return std::nullopt;
}

namespace {
template <typename T, typename F>
std::string list(const std::vector<T>& xs, F f) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) s += ", ";
    s += f(xs[i]);
  }
  return s + "]";
}
std::string ref_or_none(const Value* v) { return v ? value_ref(v->name()) : "None"; }
std::string sym_int_text(const SymIntArg& s) {
  return s.value ? value_ref(s.value->name()) : std::to_string(s.constant);
}
}  // namespace

std::string format_argument(const Argument& a) {
  using K = Argument::Kind;
  switch (a.kind()) {
    case K::None: return "None";
    case K::Tensor:
    case K::SymFloat:
    case K::SymBool: return ref_or_none(a.values().empty() ? nullptr : a.values()[0]);
    case K::Tensors: {
      const auto& vs = a.as_tensors();
      return vs.empty() ? "tensor[]" : list(vs, ref_or_none);
    }
    case K::OptionalTensors: return "?" + list(a.as_tensors(), ref_or_none);
    case K::Int: return std::to_string(a.as_int());
    case K::Ints: return list(a.as_ints(), [](int64_t v) { return std::to_string(v); });
    case K::Float: return format_float(a.as_float());
    case K::Floats: {
      const auto& vs = a.as_floats();
      return vs.empty() ? "float[]" : list(vs, format_float);
    }
    case K::Bool: return a.as_bool() ? "True" : "False";
    case K::Bools: {
      const auto& vs = a.as_bools();
      return vs.empty() ? "bool[]" : list(vs, [](bool b) { return std::string(b ? "True" : "False"); });
    }
    case K::String: return quote(a.as_string());
    case K::Strings: {
      const auto& vs = a.as_strings();
      return vs.empty() ? "str[]" : list(vs, [](const std::string& s) { return quote(s); });
    }
    case K::SymInt: {
      SymIntArg s = a.as_sym_int();
      return s.value ? value_ref(s.value->name()) : "sym(" + std::to_string(s.constant) + ")";
    }
    case K::SymInts: {
      auto vs = a.as_sym_ints();
      bool any_value = false;
      for (const auto& s : vs) any_value |= s.is_value();
      return (any_value ? "" : "sym") + list(vs, sym_int_text);
    }
    case K::ScalarType: return std::string("dtype.") + dtype_name(a.as_scalar_type());
    case K::Layout: return std::string("layout.") + layout_name(a.as_layout());
    case K::MemoryFormat: return std::string("memory_format.") + memory_format_name(a.as_memory_format());
    case K::Device: return "device(" + quote(a.as_device().to_string()) + ")";
    case K::Graph: {
      std::string text = print_graph(*a.as_graph());
      if (!text.empty() && text.back() == '\n') text.pop_back();  // the node's line goes on after '}'
      return text;
    }
  }
  return "?";
}

}  // namespace kiln::ir::textfmt
