// printable(): the escaping every printed message goes through, and kiln::Error's use of it (control bytes in
// names from a hostile archive must not reach the terminal as escape sequences).

#include "kiln/support/printable.h"

#include <gtest/gtest.h>

#include "kiln/support/error.h"

namespace kiln {
namespace {

TEST(Printable, KeepsTextAndUtf8) {
  EXPECT_EQ(printable("conv.weight [1, 2] 'x' ~"), "conv.weight [1, 2] 'x' ~");
  EXPECT_EQ(printable("gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x94\xa5"), "gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x94\xa5");
}

TEST(Printable, EscapesControlBytesAndInvalidUtf8) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable(std::string("n\0m", 3)), "n\\x00m");
  EXPECT_EQ(printable("\x07\x7f\t"), "\\x07\\x7f\\x09");
  EXPECT_EQ(printable("line1\nline2\r"), "line1 line2 ");
  EXPECT_EQ(printable("line1\nline2", false), "line1\nline2");
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");                   // never valid in UTF-8
  EXPECT_EQ(printable("\xc3"), "\\xc3");                            // truncated sequence
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "\\xc2\\x9b31m");          // C1 CSI, a terminal escape
  EXPECT_EQ(printable("\xe0\x80\x80"), "\\xe0\\x80\\x80");          // overlong
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // surrogate
}

TEST(Printable, ErrorsEscapeMessageAndContext) {
  ErrorContext where;
  where.node = "evil\x1b]0;title\x07";
  Error e(ErrorKind::InvalidInput, "bad name '\x1b[31mred'", where);
  EXPECT_STREQ(e.what(), "[InvalidInput] bad name '\\x1b[31mred' (node 'evil\\x1b]0;title\\x07')");
  // message() keeps the raw text for programs that inspect it.
  EXPECT_EQ(e.message(), "bad name '\x1b[31mred'");
}

}  // namespace
}  // namespace kiln
