#include "compiler/settings_json.h"

#include "kiln/support/error.h"

namespace kiln::compiler::detail {

nlohmann::json settings_to_json(const CompilationSettings& s) {
  nlohmann::json j;
  std::vector<std::string> precisions;
  for (DType d : s.enabled_precisions) precisions.push_back(dtype_name(d));
  j["enabled_precisions"] = precisions;
  j["use_explicit_typing"] = s.use_explicit_typing;
  j["truncate_double"] = s.truncate_double;
  j["min_block_size"] = s.min_block_size;
  j["torch_executed_ops"] = s.torch_executed_ops;
  j["require_full_compilation"] = s.require_full_compilation;
  j["assume_dynamic_shape_support"] = s.assume_dynamic_shape_support;
  j["use_fast_partitioner"] = s.use_fast_partitioner;
  j["enable_resource_partitioning"] = s.enable_resource_partitioning;
  j["cpu_memory_budget"] = s.cpu_memory_budget ? nlohmann::json(*s.cpu_memory_budget) : nlohmann::json();
  j["backend"] = s.backend;
  j["workspace_size"] = s.workspace_size;
  j["optimization_level"] = s.optimization_level;
  j["num_avg_timing_iters"] = s.num_avg_timing_iters;
  j["timing_cache_path"] = s.timing_cache_path;
  j["pass_through_build_failures"] = s.pass_through_build_failures;
  j["immutable_weights"] = s.immutable_weights;
  j["strip_engine_weights"] = s.strip_engine_weights;
  j["refit_identical_engine_weights"] = s.refit_identical_engine_weights;
  j["allow_tf32"] = s.allow_tf32;
  j["use_cuda_graphs"] = s.use_cuda_graphs;
  j["cache_built_engines"] = s.cache_built_engines;
  j["reuse_cached_engines"] = s.reuse_cached_engines;
  j["engine_cache_dir"] = s.engine_cache_dir;
  j["engine_cache_size"] = s.engine_cache_size;
  j["lazy_engine_init"] = s.lazy_engine_init;
  j["dryrun"] = s.dryrun;
  j["debug"] = s.debug;
  return j;
}

CompilationSettings settings_from_json(const nlohmann::json& j) {
  KILN_CHECK(j.is_object(), InvalidInput, "settings: expected a JSON object");
  CompilationSettings s;
  try {
    s.enabled_precisions.clear();
    for (const std::string& name : j.at("enabled_precisions").get<std::vector<std::string>>()) {
      std::optional<DType> d = dtype_from_name(name);
      KILN_CHECK(d.has_value(), InvalidInput, "settings: unknown precision '", name, "'");
      s.enabled_precisions.insert(*d);
    }
    s.use_explicit_typing = j.at("use_explicit_typing").get<bool>();
    s.truncate_double = j.at("truncate_double").get<bool>();
    s.min_block_size = j.at("min_block_size").get<int64_t>();
    s.torch_executed_ops = j.at("torch_executed_ops").get<std::set<std::string>>();
    s.require_full_compilation = j.at("require_full_compilation").get<bool>();
    s.assume_dynamic_shape_support = j.at("assume_dynamic_shape_support").get<bool>();
    s.use_fast_partitioner = j.at("use_fast_partitioner").get<bool>();
    s.enable_resource_partitioning = j.at("enable_resource_partitioning").get<bool>();
    if (!j.at("cpu_memory_budget").is_null()) s.cpu_memory_budget = j.at("cpu_memory_budget").get<int64_t>();
    s.backend = j.at("backend").get<std::string>();
    s.workspace_size = j.at("workspace_size").get<int64_t>();
    s.optimization_level = j.at("optimization_level").get<int>();
    s.num_avg_timing_iters = j.at("num_avg_timing_iters").get<int>();
    s.timing_cache_path = j.at("timing_cache_path").get<std::string>();
    s.pass_through_build_failures = j.at("pass_through_build_failures").get<bool>();
    s.immutable_weights = j.at("immutable_weights").get<bool>();
    s.strip_engine_weights = j.at("strip_engine_weights").get<bool>();
    s.refit_identical_engine_weights = j.at("refit_identical_engine_weights").get<bool>();
    // Added later: settings saved before them have neither (both default off).
    s.allow_tf32 = j.value("allow_tf32", false);
    s.use_cuda_graphs = j.value("use_cuda_graphs", false);
    s.cache_built_engines = j.at("cache_built_engines").get<bool>();
    s.reuse_cached_engines = j.at("reuse_cached_engines").get<bool>();
    s.engine_cache_dir = j.at("engine_cache_dir").get<std::string>();
    s.engine_cache_size = j.at("engine_cache_size").get<int64_t>();
    s.lazy_engine_init = j.at("lazy_engine_init").get<bool>();
    s.dryrun = j.at("dryrun").get<bool>();
    s.debug = j.at("debug").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    KILN_FAIL(InvalidInput, "settings: ", e.what());
  }
  return s;
}

}  // namespace kiln::compiler::detail
