#pragma once
// Checked access to the JSON documents of a .pt2 archive. Every lookup names the archive, the entry and the
// JSON path it was reading, so a missing field or a value of the wrong type becomes a one-line
// kiln::Error(InvalidInput) instead of a nlohmann exception.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/support/error.h"

namespace kiln::frontend {

/// Where a JSON document came from: the archive path and the entry inside it.
struct JsonSource {
  std::string archive;  // the .pt2 file
  std::string entry;    // "models/model.json"
};

/// Parses `text` as JSON; a syntax error or nesting deeper than kMaxJsonDepth is a kiln::Error(InvalidInput)
/// naming the archive and entry.
nlohmann::json parse_json(const std::string& text, const JsonSource& source);

/// A read-only view of one JSON value with its path ("graph_module.graph.nodes[3].target").
class JsonRef {
 public:
  JsonRef(const nlohmann::json& value, std::shared_ptr<const JsonSource> source, std::string path)
      : value_(&value), source_(std::move(source)), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const nlohmann::json& raw() const { return *value_; }
  bool is_null() const { return value_->is_null(); }
  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }

  /// The member `key` of an object; throws when this is not an object or the member is absent.
  JsonRef at(std::string_view key) const;
  /// The member `key`, or nullopt when absent or null. Throws when this is not an object.
  std::optional<JsonRef> find(std::string_view key) const;
  bool has(std::string_view key) const;
  /// Element i of an array; throws when this is not an array or i is out of range.
  JsonRef at(size_t index) const;
  /// The elements of an array (throws when this is not an array).
  std::vector<JsonRef> elements() const;
  /// The members of an object in document order (throws when this is not an object).
  std::vector<std::pair<std::string, JsonRef>> members() const;
  size_t size() const;

  /// For torch.export unions ({"as_int": 3}): the single key of a one-member object. Throws otherwise.
  std::pair<std::string, JsonRef> union_member() const;

  int64_t as_int() const;
  /// Accepts any JSON number, and the strings "Infinity", "-Infinity" and "NaN" that Python writes for
  /// non-finite floats.
  double as_double() const;
  bool as_bool() const;
  const std::string& as_string() const;
  std::vector<int64_t> as_ints() const;

  /// A kiln::Error(InvalidInput) "<entry>: <path>: <message>" with the archive as the error's file.
  [[nodiscard]] Error error(const std::string& message) const;
  /// The same with kind Unsupported.
  [[nodiscard]] Error unsupported(const std::string& message) const;
  /// `inner` (e.g. from SymExpr::parse_srepr) with this value's entry and path prefixed, keeping its kind.
  [[nodiscard]] Error wrap(const Error& inner) const;

 private:
  const char* type_name() const;
  const nlohmann::json* value_;
  std::shared_ptr<const JsonSource> source_;
  std::string path_;
};

}  // namespace kiln::frontend
