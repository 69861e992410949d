// Parsing of PyTorch schema strings into OpSchema, and argument normalization against a schema.

#include "kiln/frontend/op_schema.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <unordered_map>

#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::frontend {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(std::string_view schema, const std::string& message) {
  KILN_FAIL(InvalidInput, "bad op schema \"", schema, "\": ", message);
}

// Splits at top-level commas (outside (), [] and quotes).
std::vector<std::string_view> split_top_level(std::string_view text, std::string_view schema) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') {
      if (--depth < 0) fail(schema, "unbalanced brackets");
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (depth != 0 || quote) fail(schema, "unbalanced brackets or quotes");
  std::string_view last = trim(text.substr(start));
  if (!last.empty() || !parts.empty()) parts.push_back(last);
  return parts;
}

// Removes alias annotations: "Tensor(a!)" -> "Tensor", "Tensor(a -> *)[]" -> "Tensor[]".
std::string strip_alias(std::string_view type, std::string_view schema) {
  std::string out;
  int depth = 0;
  for (char c : type) {
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) fail(schema, "unbalanced alias annotation");
    } else if (depth == 0 && !std::isspace(static_cast<unsigned char>(c))) {
      out += c;
    }
  }
  return out;
}

bool parse_int(std::string_view text, int64_t& out) {
  text = trim(text);
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool parse_double(std::string_view text, double& out) {
  std::string s(trim(text));
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

struct TypeInfo {
  std::string base;          // "int", "SymInt", "Tensor", "float", "Scalar", ...
  bool is_list = false;
  std::optional<int64_t> fixed_length;  // "int[2]"
  bool optional = false;
};

TypeInfo parse_type(const std::string& type, std::string_view schema) {
  TypeInfo info;
  std::string t = type;
  if (!t.empty() && t.back() == '?') {
    info.optional = true;
    t.pop_back();
  }
  size_t bracket = t.find('[');
  if (bracket != std::string::npos) {
    if (t.back() != ']') fail(schema, "bad list type '" + type + "'");
    info.is_list = true;
    std::string_view len(t.data() + bracket + 1, t.size() - bracket - 2);
    if (!len.empty()) {
      int64_t n = 0;
      if (!parse_int(len, n) || n < 0) fail(schema, "bad list length in '" + type + "'");
      info.fixed_length = n;
    }
    t = t.substr(0, bracket);
    // "Tensor?[]": optional elements.
    if (!t.empty() && t.back() == '?') t.pop_back();
  }
  if (t.empty()) fail(schema, "empty type");
  info.base = t;
  return info;
}

ir::Argument parse_scalar_default(const TypeInfo& type, std::string_view text, std::string_view schema) {
  const std::string& b = type.base;
  if (b == "int" || b == "SymInt") {
    int64_t v = 0;
    if (!parse_int(text, v)) fail(schema, "bad integer default '" + std::string(text) + "'");
    return ir::Argument::int_(v);
  }
  if (b == "float" || b == "SymFloat") {
    double v = 0;
    if (!parse_double(text, v)) fail(schema, "bad float default '" + std::string(text) + "'");
    return ir::Argument::float_(v);
  }
  if (b == "Scalar") {
    int64_t i = 0;
    if (parse_int(text, i)) return ir::Argument::int_(i);
    double v = 0;
    if (parse_double(text, v)) return ir::Argument::float_(v);
    fail(schema, "bad Scalar default '" + std::string(text) + "'");
  }
  if (b == "bool" || b == "SymBool") {
    if (text == "True") return ir::Argument::bool_(true);
    if (text == "False") return ir::Argument::bool_(false);
    fail(schema, "bad bool default '" + std::string(text) + "'");
  }
  if (b == "str") {
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front()) {
      return ir::Argument::string(std::string(text.substr(1, text.size() - 2)));
    }
    fail(schema, "bad string default '" + std::string(text) + "'");
  }
  if (b == "MemoryFormat") {
    if (text == "contiguous_format") return ir::Argument::memory_format(ir::MemoryFormat::Contiguous);
    if (text == "preserve_format") return ir::Argument::memory_format(ir::MemoryFormat::Preserve);
    if (text == "channels_last") return ir::Argument::memory_format(ir::MemoryFormat::ChannelsLast);
    if (text == "channels_last_3d") return ir::Argument::memory_format(ir::MemoryFormat::ChannelsLast3d);
  }
  if (b == "Layout" && text == "strided") return ir::Argument::layout(ir::Layout::Strided);
  if (b == "ScalarType") {
    static const std::unordered_map<std::string_view, DType> kNames = {
        {"float", DType::Float32}, {"double", DType::Float64}, {"half", DType::Float16},
        {"bfloat16", DType::BFloat16}, {"long", DType::Int64}, {"int", DType::Int32},
        {"short", DType::Int16}, {"char", DType::Int8}, {"byte", DType::UInt8}, {"bool", DType::Bool}};
    auto it = kNames.find(text);
    if (it != kNames.end()) return ir::Argument::scalar_type(it->second);
  }
  if (b == "Device" && (text == "\"cpu\"" || text == "'cpu'")) return ir::Argument::device(ir::Device{});
  fail(schema, "unsupported default '" + std::string(text) + "' for type " + b);
}

ir::Argument parse_default(const TypeInfo& type, std::string_view text, std::string_view schema) {
  text = trim(text);
  if (text == "None") {
    if (!type.optional && type.base != "Generator") fail(schema, "None default for a non-optional type");
    return ir::Argument::none();
  }
  if (!type.is_list) return parse_scalar_default(type, text, schema);

  // Lists: "[]", "[0, 1]", or a scalar broadcast to the fixed length ("SymInt[2] stride=1" is [1, 1]).
  TypeInfo element = type;
  element.is_list = false;
  element.optional = false;
  std::vector<ir::Argument> items;
  if (!text.empty() && text.front() == '[') {
    if (text.back() != ']') fail(schema, "bad list default '" + std::string(text) + "'");
    std::string_view inner = trim(text.substr(1, text.size() - 2));
    if (!inner.empty()) {
      for (std::string_view part : split_top_level(inner, schema)) {
        items.push_back(parse_scalar_default(element, part, schema));
      }
    }
  } else {
    ir::Argument one = parse_scalar_default(element, text, schema);
    int64_t n = type.fixed_length.value_or(1);
    items.assign(static_cast<size_t>(n), one);
  }
  const std::string& b = type.base;
  if (b == "int" || b == "SymInt") {
    std::vector<int64_t> v;
    for (const auto& a : items) v.push_back(a.as_int());
    return ir::Argument::ints(std::move(v));
  }
  if (b == "float") {
    std::vector<double> v;
    for (const auto& a : items) v.push_back(a.as_float());
    return ir::Argument::floats(std::move(v));
  }
  if (b == "bool") {
    std::vector<bool> v;
    for (const auto& a : items) v.push_back(a.as_bool());
    return ir::Argument::bools(std::move(v));
  }
  fail(schema, "unsupported list default for type " + b + "[]");
}

}  // namespace

const SchemaArgument* OpSchema::find_argument(std::string_view name) const {
  for (const auto& a : arguments) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

int OpSchema::index_of(std::string_view name) const {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool OpSchema::returns_list() const { return returns.size() == 1 && returns[0].ends_with("[]"); }

std::string OpSchema::to_string() const {
  std::string out = op.qualified_name();
  if (op.overload != "default") out += "." + op.overload;
  out += "(";
  bool kw = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const auto& a = arguments[i];
    if (i > 0) out += ", ";
    if (a.kwarg_only && !kw) {
      out += "*, ";
      kw = true;
    }
    out += a.type + " " + a.name;
    if (a.default_value) out += "=" + a.default_text;
  }
  out += ") -> ";
  if (returns.size() == 1) {
    out += returns[0];
  } else {
    out += "(";
    for (size_t i = 0; i < returns.size(); ++i) out += (i ? ", " : "") + returns[i];
    out += ")";
  }
  return out;
}

OpSchema parse_op_schema(std::string_view text) {
  std::string_view schema = trim(text);
  size_t open = schema.find('(');
  size_t arrow = schema.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open) {
    fail(schema, "expected 'ns::name(args) -> returns'");
  }
  size_t close = schema.rfind(')', arrow);
  if (close == std::string_view::npos || close < open) fail(schema, "missing ')' before '->'");

  OpSchema out;
  std::string_view qualified = trim(schema.substr(0, open));
  size_t colons = qualified.find("::");
  if (colons == std::string_view::npos || colons == 0) fail(schema, "the name needs a namespace ('aten::')");
  out.op.ns = std::string(qualified.substr(0, colons));
  std::string_view name = qualified.substr(colons + 2);
  size_t dot = name.find('.');
  out.op.name = std::string(name.substr(0, dot));
  out.op.overload = dot == std::string_view::npos ? "default" : std::string(name.substr(dot + 1));
  if (out.op.name.empty() || out.op.overload.empty()) fail(schema, "empty name or overload");

  bool kwarg_only = false;
  for (std::string_view part : split_top_level(schema.substr(open + 1, close - open - 1), schema)) {
    if (part.empty()) fail(schema, "empty argument");
    if (part == "*") {
      kwarg_only = true;
      continue;
    }
    std::string_view decl = part;
    std::optional<std::string_view> default_text;
    // The '=' of a default sits outside brackets and quotes; types contain none.
    size_t eq = part.find('=');
    if (eq != std::string_view::npos) {
      decl = trim(part.substr(0, eq));
      default_text = trim(part.substr(eq + 1));
    }
    // The name is the last identifier; the type is everything before it (alias annotations may hold spaces).
    size_t space = decl.find_last_of(" \t");
    if (space == std::string_view::npos) fail(schema, "argument '" + std::string(part) + "' has no name");
    SchemaArgument arg;
    arg.name = std::string(trim(decl.substr(space + 1)));
    arg.type = strip_alias(decl.substr(0, space), schema);
    arg.kwarg_only = kwarg_only;
    if (arg.name.empty() || arg.type.empty()) fail(schema, "bad argument '" + std::string(part) + "'");
    TypeInfo info = parse_type(arg.type, schema);
    if (default_text) {
      arg.default_value = parse_default(info, *default_text, schema);
      arg.default_text = std::string(*default_text);
    }
    out.arguments.push_back(std::move(arg));
  }

  std::string_view returns = trim(schema.substr(arrow + 2));
  if (returns.empty()) fail(schema, "missing return type");
  std::vector<std::string_view> items;
  if (returns.front() == '(') {
    if (returns.back() != ')') fail(schema, "bad return tuple");
    items = split_top_level(returns.substr(1, returns.size() - 2), schema);
  } else {
    items.push_back(returns);
  }
  for (std::string_view item : items) {
    if (item.empty()) fail(schema, "empty return");
    // "Tensor values" (named return) or "Tensor(a)[]".
    std::string_view type = item;
    int depth = 0;
    for (size_t i = 0; i < item.size(); ++i) {
      if (item[i] == '(') ++depth;
      if (item[i] == ')') --depth;
      if (depth == 0 && std::isspace(static_cast<unsigned char>(item[i]))) {
        type = item.substr(0, i);
        break;
      }
    }
    out.returns.push_back(strip_alias(type, schema));
  }
  return out;
}

void normalize_arguments(ir::Node& node, const OpSchema& schema) {
  const auto& given = node.args();
  std::vector<bool> used(given.size(), false);
  std::vector<ir::NamedArgument> out;
  out.reserve(schema.arguments.size() + given.size());
  for (size_t position = 0; position < schema.arguments.size(); ++position) {
    const SchemaArgument& sa = schema.arguments[position];
    size_t found = given.size();
    for (size_t i = 0; i < given.size(); ++i) {
      if (!used[i] && given[i].name == sa.name) {
        found = i;
        break;
      }
    }
    // A positional argument whose name is no parameter of this schema binds by position (export keeps the name
    // of the in-place overload's `self` when it functionalizes `dropout_` into `dropout(input, ...)`).
    if (found == given.size() && position < given.size() && !used[position] && !given[position].kwarg_only &&
        schema.find_argument(given[position].name) == nullptr) {
      found = position;
    }
    if (found < given.size()) {
      used[found] = true;
      out.push_back(ir::NamedArgument{sa.name, given[found].value, sa.kwarg_only});
    } else if (sa.default_value) {
      out.push_back(ir::NamedArgument{sa.name, *sa.default_value, sa.kwarg_only});
    } else {
      throw Error(ErrorKind::InvalidInput,
                  "required argument '" + sa.name + "' of " + schema.op.to_string() + " is missing",
                  ErrorContext{"", node.name(), schema.op.to_string(), ""});
    }
  }
  for (size_t i = 0; i < given.size(); ++i) {
    if (used[i]) continue;
    KILN_WARN("node '", node.name(), "' (", schema.op.to_string(), ") has argument '", given[i].name,
              "' that Kiln's schema table lacks; keeping it");
    out.push_back(given[i]);
  }
  node.set_args(std::move(out));
}

bool fill_default_arguments(ir::Node& node) {
  const OpSchema* schema = find_op_schema(node.target());
  if (schema == nullptr) return false;
  normalize_arguments(node, *schema);
  return true;
}

}  // namespace kiln::frontend
