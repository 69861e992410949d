#pragma once
// Making text from untrusted sources (archive entry names, node names, library messages) safe to print: every
// message Kiln prints (errors, log lines) passes through printable(), so control bytes from a hostile archive
// never reach a terminal as escape sequences.

#include <string>
#include <string_view>

namespace kiln {

/// `text` with line breaks (\n, \r) turned into spaces (errors are one line; kept when `one_line` is false, for
/// log lines that print several), every other control byte
/// (below 0x20, 0x7f, the C1 range U+0080..U+009F) and every byte that is not part of valid UTF-8 written as
/// \xHH. Printable ASCII and valid UTF-8 characters are kept as they are.
std::string printable(std::string_view text, bool one_line = true);

}  // namespace kiln
