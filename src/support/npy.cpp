// .npy reading and writing (numpy's format description: numpy/lib/format.py, versions 1.0, 2.0 and 3.0).
#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/support/error.h"
#include "kiln/support/npz.h"
#include "npy_internal.h"

namespace kiln {

static_assert(std::endian::native == std::endian::little, "Kiln's npy code assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kHeaderAlignment = 64;

template <typename... Args>
[[noreturn]] void fail_npy(ErrorKind kind, const std::string& label, Args&&... args) {
  throw Error(kind, "npy '" + label + "': " + detail::concat(std::forward<Args>(args)...));
}

// The parsed header dictionary: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A parser for the Python literal numpy writes as the header: a dict with string keys whose values are a
// string, a bool or a tuple of non-negative ints. Whitespace and trailing commas are accepted where Python
// accepts them; anything else (lists, as structured dtypes use; escapes; expressions) is rejected.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& label) : text_(text), label_(label) {}

  Header parse() {
    Header header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (seen_descr) fail("repeated key 'descr'");
        seen_descr = true;
        if (peek() == '[') {
          fail_npy(ErrorKind::Unsupported, label_, "structured dtypes are not supported (descr is a list)");
        }
        header.descr = parse_string();
      } else if (key == "fortran_order") {
        if (seen_order) fail("repeated key 'fortran_order'");
        seen_order = true;
        header.fortran_order = parse_bool();
      } else if (key == "shape") {
        if (seen_shape) fail("repeated key 'shape'");
        seen_shape = true;
        header.shape = parse_shape();
      } else {
        fail("unexpected key '" + key + "' (expected 'descr', 'fortran_order' and 'shape')");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      expect('}');
      break;
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dictionary");
    if (!seen_descr || !seen_order || !seen_shape) {
      fail("header lacks one of the keys 'descr', 'fortran_order' and 'shape'");
    }
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    fail_npy(ErrorKind::InvalidInput, label_, "malformed header: ", what, " at character ", pos_, " of '",
             printable(text_), "'");
  }

  static std::string printable(std::string_view text) {
    std::string out;
    for (char c : text.substr(0, 200)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    if (text.size() > 200) out += "...";
    return out;
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\f' || text_[pos_] == '\v')) {
      ++pos_;
    }
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  std::string parse_string() {
    char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    ++pos_;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') fail("escapes in strings are not supported");
      ++pos_;
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    std::string value(text_.substr(start, pos_ - start));
    ++pos_;
    return value;
  }

  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }

  int64_t parse_int() {
    if (peek() < '0' || peek() > '9') fail("expected a non-negative integer");
    int64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      int digit = peek() - '0';
      if (value > (INT64_MAX - digit) / 10) fail("integer too large");
      value = value * 10 + digit;
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2 longs, as very old numpy wrote them
    return value;
  }

  std::vector<int64_t> parse_shape() {
    expect('(');
    std::vector<int64_t> shape;
    bool comma_after_last = false;
    for (;;) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      if (shape.size() >= 64) fail("more than 64 dimensions");
      shape.push_back(parse_int());
      skip_space();
      comma_after_last = false;
      if (peek() == ',') {
        ++pos_;
        comma_after_last = true;
        continue;
      }
      expect(')');
      break;
    }
    // "(3)" is an int in Python, not a tuple.
    if (shape.size() == 1 && !comma_after_last) {
      fail("a one-element shape needs a trailing comma, as in (3,)");
    }
    return shape;
  }

  std::string_view text_;
  const std::string& label_;
  size_t pos_ = 0;
};

struct DescrInfo {
  DType dtype;
  bool big_endian;
};

// Maps a descr to a dtype. Byte order: '<' little, '>' big (swapped on read), '|' and '=' native.
std::optional<DescrInfo> parse_descr(const std::string& descr) {
  std::string_view d = descr;
  bool big = false;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    big = d[0] == '>';
    d.remove_prefix(1);
  }
  struct Code {
    std::string_view code;
    DType dtype;
  };
  static constexpr Code kCodes[] = {
      {"f4", DType::Float32},    {"f8", DType::Float64},
      {"f2", DType::Float16},    {"e", DType::Float16},
      {"i8", DType::Int64},      {"i4", DType::Int32},
      {"i2", DType::Int16},      {"i1", DType::Int8},
      {"u1", DType::UInt8},      {"b1", DType::Bool},
      {"?", DType::Bool},        {"V2", DType::BFloat16},
      {"bf16", DType::BFloat16}, {"bfloat16", DType::BFloat16},
  };
  for (const Code& c : kCodes) {
    if (d == c.code) return DescrInfo{c.dtype, big && dtype_size(c.dtype) > 1};
  }
  return std::nullopt;
}

const char* descr_for(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Float16: return "<f2";
    case DType::BFloat16: return "<V2";  // what numpy writes for ml_dtypes.bfloat16
    case DType::Int64: return "<i8";
    case DType::Int32: return "<i4";
    case DType::Int16: return "<i2";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Bool: return "|b1";
  }
  return "?";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

}  // namespace

namespace npy_internal {

HostTensor read_npy_owned(std::vector<uint8_t> bytes, const std::string& label) {
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    fail_npy(ErrorKind::InvalidInput, label, "not a .npy array (no \\x93NUMPY magic)");
  }
  uint8_t major = bytes[6];
  uint8_t minor = bytes[7];
  size_t prefix = 0;
  uint64_t header_len = 0;
  if (major == 1) {
    prefix = 10;
    header_len = static_cast<uint64_t>(bytes[8]) | static_cast<uint64_t>(bytes[9]) << 8;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail_npy(ErrorKind::InvalidInput, label, "truncated header");
    prefix = 12;
    header_len = static_cast<uint64_t>(bytes[8]) | static_cast<uint64_t>(bytes[9]) << 8 |
                 static_cast<uint64_t>(bytes[10]) << 16 | static_cast<uint64_t>(bytes[11]) << 24;
  } else {
    fail_npy(ErrorKind::Unsupported, label, "format version ", int{major}, ".", int{minor},
             " is not supported (Kiln reads 1.0, 2.0 and 3.0)");
  }
  if (header_len > bytes.size() - prefix) {
    fail_npy(ErrorKind::InvalidInput, label, "header of ", header_len, " bytes runs past the end of the ",
             bytes.size(), "-byte array");
  }
  std::string_view header_text(reinterpret_cast<const char*>(bytes.data()) + prefix, header_len);
  Header header = HeaderParser(header_text, label).parse();

  std::optional<DescrInfo> info = parse_descr(header.descr);
  if (!info) {
    fail_npy(ErrorKind::Unsupported, label, "unsupported dtype descr '", header.descr,
             "' (Kiln reads f4 f8 f2 i8 i4 i2 i1 u1 b1 and bfloat16 as V2/bfloat16)");
  }
  int64_t numel = 0;
  try {
    numel = checked_numel(header.shape);
  } catch (const Error& e) {
    fail_npy(ErrorKind::InvalidInput, label, "bad shape ", shape_text(header.shape), ": ", e.message());
  }
  if (header.fortran_order) {
    // Fortran and C order lay out the same bytes when at most one dimension exceeds 1.
    size_t non_unit =
        std::count_if(header.shape.begin(), header.shape.end(), [](int64_t s) { return s > 1; });
    if (non_unit > 1) {
      fail_npy(ErrorKind::Unsupported, label, "Fortran-ordered arrays are not supported (shape ",
               shape_text(header.shape), "; save a C-ordered copy, np.ascontiguousarray)");
    }
  }

  size_t item = dtype_size(info->dtype);
  uint64_t available = bytes.size() - prefix - header_len;
  uint64_t needed = 0;
  bool overflows = __builtin_mul_overflow(static_cast<uint64_t>(numel), static_cast<uint64_t>(item), &needed);
  if (overflows || needed != available) {
    fail_npy(ErrorKind::InvalidInput, label, "data holds ", available, " bytes but shape ",
             shape_text(header.shape), " of '", header.descr, "' needs ",
             overflows ? std::string("more than 2^64") : std::to_string(needed));
  }

  // Drop the header in place rather than copying the data.
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(prefix + header_len));
  if (info->big_endian) {
    for (size_t i = 0; i < bytes.size(); i += item) std::reverse(bytes.begin() + i, bytes.begin() + i + item);
  }
  if (info->dtype == DType::Bool) {
    // numpy treats any non-zero byte as True; Kiln's bools are exactly 0 or 1.
    for (uint8_t& b : bytes) b = b != 0;
  }
  return HostTensor(info->dtype, std::move(header.shape),
                    std::make_shared<const std::vector<uint8_t>>(std::move(bytes)));
}

}  // namespace npy_internal

HostTensor read_npy(const std::vector<uint8_t>& bytes, const std::string& label) {
  return npy_internal::read_npy_owned(bytes, label);
}

std::vector<uint8_t> write_npy(const HostTensor& tensor) {
  KILN_CHECK(tensor.defined(), InvalidInput, "write_npy: the tensor is undefined");
  std::string header = std::string("{'descr': '") + descr_for(tensor.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape_text(tensor.sizes()) + ", }";
  // Version 1.0 holds a header of up to 65535 bytes; pad with spaces and a newline so that the data starts on
  // a 64-byte boundary, as numpy does.
  size_t prefix = 10;
  size_t total = prefix + header.size() + 1;
  size_t padded = (total + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  if (padded - prefix > 65535) {
    prefix = 12;
    total = prefix + header.size() + 1;
    padded = (total + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  }
  header.append(padded - total, ' ');
  header += '\n';
  size_t header_len = header.size();

  std::vector<uint8_t> out(padded + tensor.nbytes());
  std::memcpy(out.data(), kMagic, kMagicSize);
  out[6] = prefix == 10 ? 1 : 2;
  out[7] = 0;
  for (size_t i = 0; i + 8 < prefix; ++i) out[8 + i] = static_cast<uint8_t>(header_len >> (8 * i));
  std::memcpy(out.data() + prefix, header.data(), header_len);
  if (tensor.nbytes() > 0) std::memcpy(out.data() + padded, tensor.data(), tensor.nbytes());
  return out;
}

}  // namespace kiln
