// JSON nesting limit (kiln/support/json_limits.h): the pre-scan that keeps recursive parsers and serializers
// away from hostile documents (a model.json with 200,000 nested '[' crashed the loader before).

#include "kiln/support/json_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "kiln/support/error.h"

namespace kiln {
namespace {

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonLimits, CountsNestingOutsideStrings) {
  EXPECT_EQ(json_nesting_depth("{}"), 1u);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": []}]})"), 4u);
  // Brackets inside strings, escaped quotes included, do not count.
  EXPECT_EQ(json_nesting_depth(R"({"s": "[[[[\"[[[[", "t": [ "]]]" ]})"), 2u);
  EXPECT_EQ(json_nesting_depth("123"), 0u);
  // Unbalanced closers never wrap the depth around.
  EXPECT_EQ(json_nesting_depth("]]]]["), 1u);
}

TEST(JsonLimits, RejectsDeepDocumentsAndStopsEarly) {
  EXPECT_NO_THROW(check_json_depth(nested(kMaxJsonDepth), "doc.json"));
  try {
    check_json_depth(nested(200000), "models/model.json");
    FAIL() << "200,000 levels accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("models/model.json nests arrays/objects deeper than 512"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(json_nesting_depth(nested(200000)), kMaxJsonDepth + 1);  // stops counting past the limit
}

}  // namespace
}  // namespace kiln
