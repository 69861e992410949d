// OpName parsing and printing.

#include "kiln/ir/op_name.h"

#include <cctype>
#include <vector>

#include "kiln/support/error.h"

namespace kiln::ir {

namespace {

bool is_python_namespace(std::string_view ns) {
  return ns == "_operator" || ns == "operator" || ns == "math" || ns == "builtins" || ns == "torch";
}

bool valid_part(std::string_view part) {
  if (part.empty()) return false;
  for (char c : part) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

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
