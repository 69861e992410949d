#include "kiln/support/json_limits.h"

#include "kiln/support/error.h"

namespace kiln {

size_t json_nesting_depth(std::string_view text, size_t stop_after) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > stop_after) return deepest;
        }
        break;
      case ']':
      case '}':
        // Unbalanced closers are the parser's to report; never wrap below zero.
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return deepest;
}

void check_json_depth(std::string_view text, const std::string& what) {
  KILN_CHECK(json_nesting_depth(text) <= kMaxJsonDepth, InvalidInput, what, " nests arrays/objects deeper than ",
             kMaxJsonDepth, " levels (the limit on untrusted JSON, see docs/limits.md)");
}

}  // namespace kiln
