// OpName parsing and printing.

#include "kiln/ir/op_name.h"

#include <cctype>
#include <vector>

#include "kiln/support/error.h"

namespace kiln::ir {

namespace {

bool valid_part(std::string_view part) {
  if (part.empty()) return false;
  for (char c : part) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::string canonical_op_namespace(std::string_view ns) {
  return ns == "operator" ? "_operator" : std::string(ns);
}

bool is_python_namespace(std::string_view ns) {
  return ns == "_operator" || ns == "operator" || ns == "math" || ns == "builtins" || ns == "torch";
}

std::string normalize_op_spelling(std::string_view text) {
  std::string s(text);
  constexpr std::string_view kPrefix = "torch.ops.";
  if (s.rfind(kPrefix, 0) == 0) s = s.substr(kPrefix.size());
  for (size_t pos; (pos = s.find("::")) != std::string::npos;) s.replace(pos, 2, ".");
  if (s.rfind("operator.", 0) == 0) s = "_" + s;
  return s;
}

std::string canonical_op_packet(const OpName& op) { return canonical_op_namespace(op.ns) + "." + op.name; }

std::string canonical_op_name(const OpName& op) {
  std::string s = canonical_op_packet(op);
  if (!op.overload.empty()) s += "." + op.overload;
  return s;
}

bool op_in_set(const OpName& op, const std::set<std::string>& ops) {
  if (ops.empty()) return false;
  const std::string full = canonical_op_name(op);
  const std::string packet = canonical_op_packet(op);
  for (const std::string& entry : ops) {
    const std::string e = normalize_op_spelling(entry);
    if (e == full || e == packet) return true;
  }
  return false;
}

OpName OpName::parse(std::string_view text) {
  std::string original(text);
  KILN_CHECK(!text.empty(), InvalidInput, "empty operator name");
  std::string s(text);
  if (s.rfind("torch.ops.", 0) == 0) s = s.substr(10);
  auto sep = s.find("::");
  if (sep != std::string::npos) s = s.substr(0, sep) + "." + s.substr(sep + 2);
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts) {
    KILN_CHECK(valid_part(p), InvalidInput, "malformed operator name '", original, "'");
  }
  KILN_CHECK(parts.size() >= 2, InvalidInput, "malformed operator name '", original,
             "' (expected namespace.name[.overload])");
  OpName op;
  op.ns = parts[0];
  if (is_python_namespace(op.ns) && original.rfind("torch.ops.", 0) != 0) {
    op.name = parts[1];
    for (size_t i = 2; i < parts.size(); ++i) op.name += "." + parts[i];
    return op;
  }
  KILN_CHECK(parts.size() <= 3, InvalidInput, "malformed operator name '", original,
             "' (expected namespace.name[.overload])");
  op.name = parts[1];
  op.overload = parts.size() == 3 ? parts[2] : "default";
  return op;
}

std::string OpName::to_string() const {
  std::string s = ns + "." + name;
  if (!overload.empty()) s += "." + overload;
  return s;
}

std::string OpName::packet() const { return ns + "." + name; }

std::string OpName::qualified_name() const { return ns + "::" + name; }

bool OpName::is_python_operator() const { return overload.empty() && is_python_namespace(ns); }

}  // namespace kiln::ir
