#include "settings/shorthand_flags.h"

#include "kiln/support/error.h"
#include "settings/flag_values.h"

namespace kiln::settings::detail {
namespace {

void partitioner(CompilationSettings& s, std::string_view value) {
  check_choice("partitioner", value, "fast|global");
  s.use_fast_partitioner = value == "fast";
}

void cpu_memory_budget(CompilationSettings& s, std::string_view value) {
  s.cpu_memory_budget = parse_positive_bytes("cpu-memory-budget", value);
  s.enable_resource_partitioning = true;
}

void cache_dir(CompilationSettings& s, std::string_view value) {
  KILN_CHECK(!value.empty(), InvalidInput, "--cache-dir: expected a directory");
  s.engine_cache_dir = parse_text("cache-dir", value);
  s.cache_built_engines = s.reuse_cached_engines = true;
  s.immutable_weights = false;  // cached engines are weightless and refitted
}

void no_cache(CompilationSettings& s, std::string_view value) {
  if (!parse_switch("no-cache", value)) return;
  s.cache_built_engines = s.reuse_cached_engines = false;
  s.timing_cache_path.clear();
}

void no_cuda_graphs(CompilationSettings& s, std::string_view value) {
  if (!parse_switch("no-cuda-graphs", value)) return;
  s.use_cuda_graphs = s.static_shape_cuda_graphs = false;
}

void refittable(CompilationSettings& s, std::string_view value) {
  s.immutable_weights = !parse_switch("refittable", value);
}

constexpr ShorthandFlag kShorthands[] = {
    {"partitioner", "fast|global", "adjacency (fast, default) or global partitioning", partitioner},
    {"cpu-memory-budget", "BYTES", "per-engine weight budget (K/M/G suffixes); enables resource partitioning",
     cpu_memory_budget},
    {"cache-dir", "DIR",
     "engine cache: reuse engines built before (refitted with this program's weights), save new", cache_dir},
    {"no-cache", "", "no engine cache and no timing cache: build every engine from scratch", no_cache},
    {"refittable", "", "build refittable engines (immutable_weights=false), for kiln refit", refittable},
    {"no-cuda-graphs", "", "run no engine through CUDA graphs, not even static-shape ones (cuda)", no_cuda_graphs},
};

}  // namespace

std::span<const ShorthandFlag> shorthand_flags() { return kShorthands; }

}  // namespace kiln::settings::detail
