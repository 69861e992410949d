#pragma once
// Whether operator names a user gives (torch_executed_ops) name operators Kiln knows: a misspelt name would
// otherwise match nothing and silently force nothing into PyTorch.

#include <set>
#include <string>
#include <vector>

namespace kiln::conversion {

/// The names in `spellings` (overloads or packets, as torch_executed_ops takes them) that name no operator of
/// the op-schema table and no target of a registered converter, in set order.
std::vector<std::string> unknown_ops(const std::set<std::string>& spellings);

}  // namespace kiln::conversion
