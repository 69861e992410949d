#include "kiln/support/printable.h"

#include <cstdint>

namespace kiln {
namespace {

void escape(std::string& out, unsigned char byte) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 15];
}

/// Length of the valid UTF-8 sequence starting at text[i] (2..4), or 0 when there is none.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  uint32_t cp = b & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  const bool invalid = cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f);
  return overlong || invalid ? 0 : n;
}

}  // namespace

std::string printable(std::string_view text, bool one_line) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == '\n' || b == '\r') {
      out += one_line ? ' ' : static_cast<char>(b);
      ++i;
    } else if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
      ++i;
    } else if (size_t n = b >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      escape(out, b);
      ++i;
    }
  }
  return out;
}

}  // namespace kiln
