// Parsing the shared compilation-settings flags.

#include "kiln/partitioning/settings_flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "kiln/conversion/registry.h"
#include "kiln/frontend/op_schema.h"
#include "kiln/support/error.h"

namespace kiln::partitioning {
namespace {

/// Whether `spelling` (an overload or a packet, as torch_executed_ops takes) names an operator Kiln knows: one in
/// the op-schema table or with a registered converter.
bool is_known_op(const std::string& spelling) {
  const std::set<std::string> one = {spelling};
  for (const frontend::OpSchema& schema : frontend::known_op_schemas()) {
    if (conversion::op_in_set(schema.op, one)) return true;
  }
  for (const ir::OpName& op : conversion::converters().unique_targets()) {
    if (conversion::op_in_set(op, one)) return true;
  }
  return false;
}

std::string normalize_key(std::string_view key) {
  while (!key.empty() && key.front() == '-') key.remove_prefix(1);
  std::string k(key);
  std::replace(k.begin(), k.end(), '_', '-');
  return k;
}

bool parse_switch(const std::string& flag, std::string_view value) {
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v.empty() || v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  KILN_FAIL(InvalidInput, "--", flag, ": expected true or false, got '", value, "'");
}

int64_t parse_int(const std::string& flag, std::string_view value, bool allow_suffix) {
  int64_t multiplier = 1;
  std::string_view digits = value;
  if (allow_suffix && !digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K': multiplier = int64_t{1} << 10; break;
      case 'M': multiplier = int64_t{1} << 20; break;
      case 'G': multiplier = int64_t{1} << 30; break;
      default: break;
    }
    if (multiplier != 1) digits.remove_suffix(1);
  }
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  KILN_CHECK(!digits.empty() && ec == std::errc() && ptr == digits.data() + digits.size() && n >= 0, InvalidInput,
             "--", flag, ": expected a non-negative integer, got '", value, "'");
  KILN_CHECK(n <= INT64_MAX / multiplier, InvalidInput, "--", flag, ": value '", value, "' is too large");
  return n * multiplier;
}

}  // namespace

bool is_settings_switch(std::string_view key) {
  const std::string k = normalize_key(key);
  return k == "require-full-compilation" || k == "assume-dynamic-shape-support" ||
         k == "enable-resource-partitioning" || k == "no-cache" || k == "refittable" ||
         k == "use-cuda-graphs" || k == "allow-tf32";
}

bool apply_settings_flag(compiler::CompilationSettings& settings, std::string_view key, std::string_view value) {
  const std::string k = normalize_key(key);
  if (k == "min-block-size") {
    settings.min_block_size = parse_int(k, value, false);
  } else if (k == "torch-executed-ops") {
    std::string_view rest = value;
    std::string unknown;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string op(rest.substr(0, comma));
      op.erase(std::remove_if(op.begin(), op.end(), [](unsigned char c) { return std::isspace(c); }), op.end());
      if (!op.empty() && !is_known_op(op)) unknown += (unknown.empty() ? "'" : ", '") + op + "'";
      if (!op.empty()) settings.torch_executed_ops.insert(op);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    // A misspelt name would otherwise match nothing and silently force nothing into PyTorch.
    KILN_CHECK(unknown.empty(), InvalidInput, "--torch-executed-ops: unknown operator ", unknown,
               " (neither in Kiln's op schema table nor converted; `kiln converters` lists the converted ones)");
  } else if (k == "require-full-compilation") {
    settings.require_full_compilation = parse_switch(k, value);
  } else if (k == "assume-dynamic-shape-support") {
    settings.assume_dynamic_shape_support = parse_switch(k, value);
  } else if (k == "enable-resource-partitioning") {
    settings.enable_resource_partitioning = parse_switch(k, value);
  } else if (k == "partitioner") {
    KILN_CHECK(value == "fast" || value == "global", InvalidInput, "--partitioner: expected fast or global, got '",
               value, "'");
    settings.use_fast_partitioner = value == "fast";
  } else if (k == "cpu-memory-budget") {
    const int64_t bytes = parse_int(k, value, true);
    KILN_CHECK(bytes > 0, InvalidInput, "--cpu-memory-budget: must be positive, got '", value, "'");
    settings.cpu_memory_budget = bytes;
    settings.enable_resource_partitioning = true;
  } else if (k == "backend") {
    KILN_CHECK(value == "cpu" || value == "cuda", InvalidInput, "--backend: expected cpu or cuda, got '", value, "'");
    settings.backend = std::string(value);
  } else if (k == "cache-dir") {
    KILN_CHECK(!value.empty(), InvalidInput, "--cache-dir: expected a directory");
    settings.engine_cache_dir = std::string(value);
    settings.cache_built_engines = settings.reuse_cached_engines = true;
    settings.immutable_weights = false;  // cached engines are weightless and refitted
  } else if (k == "cache-size") {
    const int64_t bytes = parse_int(k, value, true);
    KILN_CHECK(bytes > 0, InvalidInput, "--cache-size: must be positive, got '", value, "'");
    settings.engine_cache_size = bytes;
  } else if (k == "no-cache") {
    if (parse_switch(k, value)) {
      settings.cache_built_engines = settings.reuse_cached_engines = false;
      settings.timing_cache_path.clear();
    }
  } else if (k == "timing-cache") {
    settings.timing_cache_path = std::string(value);
  } else if (k == "refittable") {
    settings.immutable_weights = !parse_switch(k, value);
  } else if (k == "use-cuda-graphs") {
    settings.use_cuda_graphs = parse_switch(k, value);
  } else if (k == "allow-tf32") {
    settings.allow_tf32 = parse_switch(k, value);
  } else {
    return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> settings_flags_help() {
  return {
      {"--min-block-size N", "engine segments with fewer compute ops go back to PyTorch (default 5)"},
      {"--torch-executed-ops a,b", "operators (overloads or packets) forced to run in PyTorch"},
      {"--require-full-compilation", "fail unless the whole graph runs in one engine"},
      {"--partitioner fast|global", "adjacency (fast, default) or global partitioning"},
      {"--assume-dynamic-shape-support", "treat every converter as supporting dynamic shapes"},
      {"--enable-resource-partitioning", "split engines whose weights exceed the memory budget"},
      {"--cpu-memory-budget BYTES",
       "per-engine weight budget (K/M/G suffixes); enables resource partitioning"},
      {"--backend cpu|cuda", "engine backend (default cpu)"},
      {"--cache-dir DIR",
       "engine cache: reuse engines built before (refitted with this program's weights), save new"},
      {"--cache-size BYTES",
       "engine cache size budget (K/M/G suffixes; default 5G), least recently used evicted"},
      {"--no-cache", "no engine cache and no timing cache: build every engine from scratch"},
      {"--timing-cache FILE",
       "timing cache file (default <user cache dir>/timing_cache.bin: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln; empty: none)"},
      {"--refittable", "build refittable engines (immutable_weights=false), for kiln refit"},
      {"--use-cuda-graphs",
       "run engines through CUDA graphs, replayed while input shapes and buffers repeat (cuda)"},
      {"--allow-tf32", "let fp32 matmuls and convolutions use TF32 tactics (cuda; default: strict fp32)"},
  };
}

}  // namespace kiln::partitioning
