// Parsing "NAME=MIN:OPT:MAX" input specs.

#include <charconv>

#include "kiln/compiler/compile.h"
#include "kiln/support/error.h"

namespace kiln::compiler {
namespace {

std::vector<int64_t> parse_shape(const std::string& text, const std::string& whole) {
  std::vector<int64_t> dims;
  if (text.empty()) return dims;
  size_t start = 0;
  while (true) {
    size_t end = text.find('x', start);
    std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    int64_t value = -1;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    KILN_CHECK(!part.empty() && ec == std::errc() && ptr == part.data() + part.size() && value >= 0, InvalidInput,
               "input spec '", whole, "': '", part, "' is not a dimension (shapes are written like 1x3x224x224)");
    dims.push_back(value);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return dims;
}

}  // namespace

InputSpec parse_input_spec(const std::string& text) {
  size_t eq = text.find('=');
  KILN_CHECK(eq != std::string::npos && eq > 0, InvalidInput, "input spec '", text,
             "' must be NAME=MIN:OPT:MAX or NAME=SHAPE (shapes like 1x3x224x224)");
  InputSpec spec;
  spec.name = text.substr(0, eq);
  std::string shapes = text.substr(eq + 1);
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = shapes.find(':', start);
    parts.push_back(shapes.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  KILN_CHECK(parts.size() == 1 || parts.size() == 3, InvalidInput, "input spec '", text, "' has ", parts.size(),
             " shapes; give one (fixed) or three (MIN:OPT:MAX)");
  spec.min = parse_shape(parts[0], text);
  spec.opt = parts.size() == 3 ? parse_shape(parts[1], text) : spec.min;
  spec.max = parts.size() == 3 ? parse_shape(parts[2], text) : spec.min;
  KILN_CHECK(spec.min.size() == spec.opt.size() && spec.opt.size() == spec.max.size(), InvalidInput, "input spec '",
             text, "': MIN, OPT and MAX have different ranks");
  for (size_t d = 0; d < spec.min.size(); ++d) {
    KILN_CHECK(spec.min[d] <= spec.opt[d] && spec.opt[d] <= spec.max[d], InvalidInput, "input spec '", text,
               "': dim ", d, " needs MIN <= OPT <= MAX");
  }
  return spec;
}

}  // namespace kiln::compiler
