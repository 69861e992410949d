#pragma once
// The compilation-settings flags shared by `kiln compile` and `kiln inspect`, parsed from key/value strings
// so that any command line front end can reuse them.
//
//   --min-block-size N             min_block_size
//   --torch-executed-ops a,b       torch_executed_ops (overloads or packets; added to the set)
//   --require-full-compilation     require_full_compilation
//   --partitioner fast|global      use_fast_partitioner
//   --assume-dynamic-shape-support assume_dynamic_shape_support
//   --enable-resource-partitioning enable_resource_partitioning
//   --cpu-memory-budget BYTES      cpu_memory_budget (K/M/G binary suffixes accepted); implies
//                                  enable_resource_partitioning
//   --backend cpu|cuda             backend
// Switches take no value ("") or one of true/false/1/0/yes/no.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/compiler/compilation_settings.h"

namespace kiln::partitioning {

/// Applies one flag. `key` may be written with or without leading dashes and with '_' or '-'. Returns false
/// when `key` is not a settings flag; throws kiln::Error(InvalidInput) naming the flag on a bad value.
bool apply_settings_flag(compiler::CompilationSettings& settings, std::string_view key, std::string_view value);
/// True when the flag is a switch (takes no value).
bool is_settings_switch(std::string_view key);
/// (flag, help) for every settings flag, for --help texts.
std::vector<std::pair<std::string, std::string>> settings_flags_help();

}  // namespace kiln::partitioning
