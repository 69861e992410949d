#pragma once
// The bundle input form of the archive targets (pt2, kiln_archive). A zip carries a CRC-32 per entry, so
// almost every byte mutation of an archive stops at the CRC check and never reaches the JSON or the weights
// behind it. A bundle lists the entries as sections instead: "--- NAME\n" then the entry's bytes, up to the
// next "\n--- " or the end. The target packs them into a well-formed zip (ZipWriter: CRCs, offsets right) and
// loads that; the zip layer itself is the zip target's. fuzz/make_seeds.py writes bundles from archives.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/support/error.h"
#include "kiln/support/zip.h"

namespace kiln::fuzz {

inline constexpr std::string_view kBundleMark = "--- ";

/// True when the input is a bundle (starts with "--- "); anything else is taken as archive bytes.
inline bool is_bundle(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size).starts_with(kBundleMark);
}

/// The zip a bundle describes, or nullopt when ZipWriter refuses an entry (a bad or duplicate name: the zip
/// reader refuses those too, so that is a clean rejection).
inline std::optional<std::vector<uint8_t>> bundle_to_zip(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string_view separator = "\n--- ";
  ZipWriter zip;
  size_t pos = kBundleMark.size();
  try {
    while (pos <= text.size()) {
      const size_t eol = text.find('\n', pos);
      const std::string_view name = text.substr(pos, eol == std::string_view::npos ? text.npos : eol - pos);
      const size_t body = eol == std::string_view::npos ? text.size() : eol + 1;
      const size_t next = text.find(separator, body);
      const size_t end = next == std::string_view::npos ? text.size() : next;
      zip.add(std::string(name), std::vector<uint8_t>(data + body, data + end));
      if (next == std::string_view::npos) break;
      pos = next + separator.size();
    }
    return zip.finish();
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// The archive bytes of a target's input: the bundle packed, or the input itself.
inline std::optional<std::vector<uint8_t>> archive_bytes(const uint8_t* data, size_t size) {
  if (is_bundle(data, size)) return bundle_to_zip(data, size);
  return std::vector<uint8_t>(data, data + size);
}

}  // namespace kiln::fuzz
