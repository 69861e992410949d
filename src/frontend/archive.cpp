#include "frontend/archive.h"

#include <algorithm>

#include "kiln/support/error.h"

namespace kiln::frontend {

namespace {
std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && s[start] == ' ') ++start;
  return s.substr(start);
}

[[noreturn]] void fail(ErrorKind kind, const std::string& archive, const std::string& message) {
  throw Error(kind, message, ErrorContext{archive, "", "", ""});
}
}  // namespace

Pt2Archive::Pt2Archive(ZipReader zip) : zip_(std::move(zip)) {
  const auto& entries = zip_.entries();
  const std::string& label = zip_.label();
  if (entries.empty()) fail(ErrorKind::InvalidInput, label, "the archive has no entries");

  for (const auto& e : entries) {
    if (e.name.ends_with("serialized_exported_program.json")) {
      fail(ErrorKind::Unsupported, label,
           "unsupported archive layout: serialized_exported_program.json is the pre-2.8 torch.export.save "
           "format; re-export with torch >= 2.9");
    }
  }

  const std::string& first = entries.front().name;
  size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0) {
    fail(ErrorKind::InvalidInput, label, "entry '" + first + "' is not inside a top-level folder");
  }
  prefix_ = first.substr(0, slash + 1);
  for (const auto& e : entries) {
    if (!e.name.starts_with(prefix_)) {
      fail(ErrorKind::InvalidInput, label,
           "entries are not all under one top-level folder ('" + prefix_ + "' and '" + e.name + "')");
    }
  }

  if (contains("archive_format")) {
    std::string format = trimmed(read_text("archive_format"));
    if (format != "pt2") {
      fail(ErrorKind::InvalidInput, label, "archive_format is '" + format + "', expected 'pt2'");
    }
  }
  if (contains("byteorder")) {
    std::string order = trimmed(read_text("byteorder"));
    if (order != "little") {
      fail(order == "big" ? ErrorKind::Unsupported : ErrorKind::InvalidInput, label,
           "byteorder is '" + order + "'; Kiln reads little-endian archives only");
    }
  }

  std::vector<std::string> models;
  const std::string models_dir = prefix_ + "models/";
  for (const auto& e : entries) {
    if (!e.name.starts_with(models_dir) || !e.name.ends_with(".json")) continue;
    std::string rest = e.name.substr(models_dir.size());
    if (rest.find('/') != std::string::npos || rest.size() <= 5) continue;
    models.push_back(rest.substr(0, rest.size() - 5));
  }
  if (models.empty()) {
    fail(ErrorKind::InvalidInput, label, "no models/*.json in the archive (not a torch.export .pt2 program?)");
  }
  if (models.size() == 1) {
    model_name_ = models.front();
  } else if (std::find(models.begin(), models.end(), "model") != models.end()) {
    model_name_ = "model";
  } else {
    std::string names;
    for (const auto& m : models) names += (names.empty() ? "" : ", ") + m;
    fail(ErrorKind::InvalidInput, label, "the archive holds several models (" + names + ") and none is named 'model'");
  }
}

std::vector<uint8_t> Pt2Archive::read(const std::string& relative) const {
  if (!contains(relative)) {
    fail(ErrorKind::InvalidInput, label(), "entry '" + prefix_ + relative + "' is missing");
  }
  return zip_.read(prefix_ + relative);
}

std::string Pt2Archive::read_text(const std::string& relative) const {
  std::vector<uint8_t> bytes = read(relative);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace kiln::frontend
