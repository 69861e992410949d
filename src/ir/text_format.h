#pragma once
// Spellings shared by the IR text printer, the parser and Argument::to_string.

#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/graph.h"

namespace kiln::ir::textfmt {

/// "%name", or %"name" with escapes when the name has characters outside [A-Za-z0-9_.].
std::string value_ref(const std::string& name);
bool is_plain_name(std::string_view name);
/// A double-quoted string with \" \\ \n \t \r and \xHH escapes.
std::string quote(std::string_view s);
/// Shortest round-trip float text that always reads back as a float: "1.0", "1e-05", "inf", "-inf", "nan".
std::string format_float(double v);
std::string format_float32(float v);
const char* layout_name(Layout l);
std::optional<Layout> layout_from_name(std::string_view name);
const char* memory_format_name(MemoryFormat m);
std::optional<MemoryFormat> memory_format_from_name(std::string_view name);
std::string format_argument(const Argument& arg);
/// A value's type as printed after "%name: " ("f32[s0, 3]", "sym_int(s0)", "sym_float", "sym_bool",
/// "opaque").
std::string value_type(const Value& v);
/// "parameter", "buffer" or "constant".
const char* constant_kind_keyword(ConstantKind k);

}  // namespace kiln::ir::textfmt
