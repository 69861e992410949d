#pragma once
// What the IR text prints bare and reads back: identifiers (a letter or '_', then letters, digits and '_'), the
// names of symbols and of op arguments. Names read from untrusted files are checked against this before they
// enter a graph, so that every graph prints to text that parses back.

#include <cctype>
#include <string_view>

namespace kiln::ir {

inline bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace kiln::ir
