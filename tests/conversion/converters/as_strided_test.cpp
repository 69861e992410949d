// as_strided as a movement of a contiguous input against libtorch eager (exact copies: the harness's default
// tolerance, rtol 1e-4 / atol 1e-5, is met with zero error): every other row from an offset (a strided
// slice), a transpose with a broadcast dim and size-1 dims, a window that ends past the input (read window
// padded, the padding never read), a view that reads the same element everywhere, and the identity.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase strided(const std::string& name, const std::string& in, const std::string& out,
                  const std::string& size, const std::string& stride, int64_t offset) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op(in,
                  "aten.as_strided.default(self=%x, size=" + size + ", stride=" + stride +
                      ", storage_offset=" + std::to_string(offset) + ")",
                  out);
  return c;
}

CaseList as_strided_cases() {
  return {
      strided("rows_step_two", "f32[4, 6, 8]", "f32[4, 3, 8]", "[4, 3, 8]", "[48, 16, 1]", 8),
      strided("transpose_broadcast", "f32[4, 8]", "f32[8, 1, 3, 4]", "[8, 1, 3, 4]", "[1, 5, 0, 8]", 0),
      strided("window_past_end", "f32[10]", "f32[3, 2]", "[3, 2]", "[4, 1]", 0),
      strided("columns", "f32[5, 6]", "f32[3, 5]", "[3, 5]", "[2, 6]", 1),
      strided("one_element", "f32[3, 4]", "f32[2, 2]", "[2, 2]", "[0, 0]", 7),
      strided("identity", "f32[2, 3, 4]", "f32[2, 3, 4]", "[2, 3, 4]", "[12, 4, 1]", 0),
  };
}

KILN_CONVERTER_CASES(AsStrided, as_strided_cases);

}  // namespace
}  // namespace kiln::conversion::testing
