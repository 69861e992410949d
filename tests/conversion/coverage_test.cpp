// Every registered converter target has at least one harness case (parsed from the families' case lists, so
// this holds whichever tests a ctest run selects).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"
#include "kiln/conversion/converter_table.h"
#include "kiln/conversion/registry.h"

namespace kiln::conversion::testing {
namespace {

TEST(ConverterCoverage, EveryRegisteredTargetHasACase) {
  std::set<std::string> covered;
  size_t cases = 0;
  for (const auto& [family, make] : case_families()) {
    for (const NamedCase& c : make()) {
      ++cases;
      for (const std::string& t : case_targets(c.c)) covered.insert(t);
    }
  }
  EXPECT_GT(cases, 100u);
  std::vector<std::string> missing;
  for (const ir::OpName& t : converters().unique_targets()) {
    if (!covered.count(ir::canonical_op_name(t))) missing.push_back(ir::canonical_op_name(t));
  }
  std::string list;
  for (const auto& m : missing) list += " " + m;
  EXPECT_TRUE(missing.empty()) << missing.size() << " registered targets without a converter test case:" << list;
}

TEST(ConverterCoverage, BuiltinTableRegistersEveryGroupOnce) {
  ConverterRegistry fresh;
  register_builtin_converters(fresh);
  EXPECT_EQ(fresh.size(), converters().size());
  EXPECT_GE(converter_groups().size(), 10u);
  // A second registration appends candidates (it does not replace): the table itself registers each target once.
  for (const ir::OpName& t : fresh.unique_targets()) {
    EXPECT_EQ(fresh.get_all_converters_with_target(t).size(), 1u) << ir::canonical_op_name(t);
  }
}

}  // namespace
}  // namespace kiln::conversion::testing
