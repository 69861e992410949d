#pragma once
// Runs the decompose pass (all decompositions on: no converter known) on IR text.

#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering::testing {

inline void expect_decomposition(const std::string& before, const std::string& expected, PassCheck check = {}) {
  auto pass = make_decompose_pass();
  expect_pass(*pass, before, expected, check);
}

}  // namespace kiln::lowering::testing
