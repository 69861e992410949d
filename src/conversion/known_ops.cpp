#include "kiln/conversion/known_ops.h"

#include "kiln/conversion/registry.h"
#include "kiln/frontend/op_schema.h"

namespace kiln::conversion {
namespace {

bool is_known_op(const std::string& spelling) {
  const std::set<std::string> one = {spelling};
  for (const frontend::OpSchema& schema : frontend::known_op_schemas()) {
    if (ir::op_in_set(schema.op, one)) return true;
  }
  for (const ir::OpName& op : converters().unique_targets()) {
    if (ir::op_in_set(op, one)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> unknown_ops(const std::set<std::string>& spellings) {
  std::vector<std::string> unknown;
  for (const std::string& op : spellings) {
    if (!is_known_op(op)) unknown.push_back(op);
  }
  return unknown;
}

}  // namespace kiln::conversion
