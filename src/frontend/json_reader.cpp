#include "frontend/json_reader.h"

#include <cmath>
#include <limits>

#include "kiln/support/json_limits.h"

namespace kiln::frontend {

nlohmann::json parse_json(const std::string& text, const JsonSource& source) {
  try {
    check_json_depth(text, source.entry);
  } catch (const Error& e) {
    throw Error(e.kind(), e.message(), ErrorContext{source.archive, "", "", ""});
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidInput, source.entry + " is not valid JSON: " + e.what(),
                ErrorContext{source.archive, "", "", ""});
  }
}

Error JsonRef::error(const std::string& message) const {
  return Error(ErrorKind::InvalidInput, source_->entry + ": " + (path_.empty() ? "<root>" : path_) + ": " + message,
               ErrorContext{source_->archive, "", "", ""});
}

Error JsonRef::unsupported(const std::string& message) const {
  return Error(ErrorKind::Unsupported, source_->entry + ": " + (path_.empty() ? "<root>" : path_) + ": " + message,
               ErrorContext{source_->archive, "", "", ""});
}

Error JsonRef::wrap(const Error& inner) const {
  return Error(inner.kind(), source_->entry + ": " + (path_.empty() ? "<root>" : path_) + ": " + inner.message(),
               ErrorContext{source_->archive, inner.context().node, inner.context().op, inner.context().tensor});
}

const char* JsonRef::type_name() const { return value_->type_name(); }

JsonRef JsonRef::at(std::string_view key) const {
  if (!value_->is_object()) throw error(std::string("expected an object, got ") + type_name());
  auto it = value_->find(key);
  if (it == value_->end()) throw error("missing field '" + std::string(key) + "'");
  return JsonRef(*it, source_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

std::optional<JsonRef> JsonRef::find(std::string_view key) const {
  if (!value_->is_object()) throw error(std::string("expected an object, got ") + type_name());
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonRef(*it, source_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

bool JsonRef::has(std::string_view key) const {
  return value_->is_object() && value_->find(key) != value_->end() && !value_->find(key)->is_null();
}

JsonRef JsonRef::at(size_t index) const {
  if (!value_->is_array()) throw error(std::string("expected an array, got ") + type_name());
  if (index >= value_->size()) {
    throw error("index " + std::to_string(index) + " out of range (size " + std::to_string(value_->size()) + ")");
  }
  return JsonRef((*value_)[index], source_, path_ + "[" + std::to_string(index) + "]");
}

std::vector<JsonRef> JsonRef::elements() const {
  if (!value_->is_array()) throw error(std::string("expected an array, got ") + type_name());
  std::vector<JsonRef> out;
  out.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i) {
    out.emplace_back((*value_)[i], source_, path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

std::vector<std::pair<std::string, JsonRef>> JsonRef::members() const {
  if (!value_->is_object()) throw error(std::string("expected an object, got ") + type_name());
  std::vector<std::pair<std::string, JsonRef>> out;
  out.reserve(value_->size());
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    out.emplace_back(it.key(), JsonRef(it.value(), source_, path_.empty() ? it.key() : path_ + "." + it.key()));
  }
  return out;
}

size_t JsonRef::size() const {
  if (!value_->is_array() && !value_->is_object()) {
    throw error(std::string("expected an array or object, got ") + type_name());
  }
  return value_->size();
}

std::pair<std::string, JsonRef> JsonRef::union_member() const {
  if (!value_->is_object()) throw error(std::string("expected a tagged union object, got ") + type_name());
  // torch writes exactly one member; tolerate extra null members but not two non-null ones.
  std::optional<std::pair<std::string, JsonRef>> found;
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (it.value().is_null() && it.key() != "as_none") continue;
    if (found) throw error("tagged union has several members ('" + found->first + "', '" + it.key() + "')");
    found.emplace(it.key(), JsonRef(it.value(), source_, path_.empty() ? it.key() : path_ + "." + it.key()));
  }
  if (!found) throw error("empty tagged union");
  return *found;
}

int64_t JsonRef::as_int() const {
  if (value_->is_number_unsigned()) {
    uint64_t v = value_->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw error("integer " + std::to_string(v) + " does not fit in int64");
    }
    return static_cast<int64_t>(v);
  }
  if (value_->is_number_integer()) return value_->get<int64_t>();
  throw error(std::string("expected an integer, got ") + type_name());
}

double JsonRef::as_double() const {
  if (value_->is_number()) return value_->get<double>();
  if (value_->is_string()) {
    const auto& s = value_->get_ref<const std::string&>();
    if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw error(std::string("expected a number, got ") + type_name());
}

bool JsonRef::as_bool() const {
  if (!value_->is_boolean()) throw error(std::string("expected a boolean, got ") + type_name());
  return value_->get<bool>();
}

const std::string& JsonRef::as_string() const {
  if (!value_->is_string()) throw error(std::string("expected a string, got ") + type_name());
  return value_->get_ref<const std::string&>();
}

std::vector<int64_t> JsonRef::as_ints() const {
  std::vector<int64_t> out;
  for (const JsonRef& e : elements()) out.push_back(e.as_int());
  return out;
}

}  // namespace kiln::frontend
