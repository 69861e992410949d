#include "kiln/support/error.h"

#include "kiln/support/printable.h"

namespace kiln {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidInput: return "InvalidInput";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::Internal: return "Internal";
    case ErrorKind::Io: return "Io";
  }
  return "Unknown";
}

std::string ErrorContext::to_string() const {
  std::string out;
  auto add = [&out](const char* label, const std::string& value) {
    if (value.empty()) return;
    if (!out.empty()) out += ", ";
    out += label;
    out += " '";
    out += value;
    out += "'";
  };
  add("file", file);
  add("node", node);
  add("op", op);
  add("tensor", tensor);
  return out;
}

namespace {
std::string format(ErrorKind kind, const std::string& message, const ErrorContext& context) {
  std::string where = context.to_string();
  std::string text = std::string("[") + to_string(kind) + "] " + message;
  if (!where.empty()) text += " (" + where + ")";
  // One line, control bytes (from archives, libraries) escaped: printable.h.
  return printable(text);
}
}  // namespace

Error::Error(ErrorKind kind, std::string message, ErrorContext context)
    : std::runtime_error(format(kind, message, context)),
      kind_(kind),
      message_(std::move(message)),
      context_(std::move(context)) {}

Error Error::with_context(const ErrorContext& outer) const {
  ErrorContext merged = context_;
  if (merged.file.empty()) merged.file = outer.file;
  if (merged.node.empty()) merged.node = outer.node;
  if (merged.op.empty()) merged.op = outer.op;
  if (merged.tensor.empty()) merged.tensor = outer.tensor;
  return Error(kind_, message_, merged);
}

}  // namespace kiln
