#pragma once
// CompilationSettings: every user-facing option of a Kiln compilation, with Torch-TensorRT's field names and
// defaults where the option exists there.
//
// This header is deliberately header-only and includes nothing but the standard library and kiln/support
// headers, so that the lower layers (partitioning, conversion) can take a `const CompilationSettings&`
// without depending on the compiler layer's library.

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "kiln/support/cache_dir.h"
#include "kiln/support/dtype.h"

namespace kiln::compiler {

/// The default timing cache file: <user cache dir>/timing_cache.bin, the user cache dir being
/// $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln (kiln/support/cache_dir.h); "" (no timing
/// cache) when none can be named. Never a shared directory such as /tmp, where any local user could plant a
/// FIFO that hangs every compile. The test suite points KILN_CACHE_DIR into the build tree: choices timed while
/// tests run side by side on a loaded machine must not land in the cache later compiles on that machine read.
inline std::string default_timing_cache_path() {
  const std::string dir = user_cache_dir();
  return dir.empty() ? std::string() : dir + "/timing_cache.bin";
}

struct CompilationSettings {
  // --- Precision ---------------------------------------------------------------------------------
  /// Precisions the engine builder may choose kernels in (Torch-TensorRT: {torch.float32}).
  std::set<DType> enabled_precisions = {DType::Float32};
  /// Build strongly typed networks: every layer keeps the dtype the graph states.
  bool use_explicit_typing = false;
  /// Let float64 tensors run in float32 inside engines.
  bool truncate_double = false;

  // --- Partitioning ------------------------------------------------------------------------------
  /// Engine segments with fewer compute operators than this are given back to PyTorch.
  int64_t min_block_size = 5;
  /// Operators forced to run in PyTorch: overloads ("aten.add.Tensor") or whole packets ("aten.add"); the
  /// "torch.ops." prefix and the "aten::add" spelling are accepted too.
  std::set<std::string> torch_executed_ops;
  /// Fail (listing every unsupported node) unless the whole graph can run in one engine.
  bool require_full_compilation = false;
  /// Treat every converter as able to handle dynamic shapes (skips the per-converter dynamic-shape checks).
  bool assume_dynamic_shape_support = false;
  /// true: adjacency ("fast") partitioner; false: global partitioner.
  bool use_fast_partitioner = true;
  /// Split engine segments whose weights exceed the per-engine CPU memory budget.
  bool enable_resource_partitioning = false;
  /// Per-engine weight budget in bytes for resource partitioning; unset: available memory / 4.
  std::optional<int64_t> cpu_memory_budget;

  // --- Engine building ---------------------------------------------------------------------------
  /// Which Kiln engine backend builds the engines: "cpu" or "cuda".
  std::string backend = "cpu";
  /// Builder workspace limit in bytes (0: the backend's default).
  int64_t workspace_size = 0;
  /// Builder optimization level 0..5 (higher: more tactics timed); Torch-TensorRT's default is 3.
  int optimization_level = 3;
  /// Timing iterations averaged per tactic candidate.
  int num_avg_timing_iters = 1;
  /// Timing cache file ("" disables it); default: default_timing_cache_path().
  std::string timing_cache_path = default_timing_cache_path();
  /// Raise engine build failures instead of falling back to PyTorch for the segment.
  bool pass_through_build_failures = false;
  /// false: engines are built refittable (weights can be replaced without a rebuild: refit_module_weights, the
  /// engine cache). true lets the engine builder fold weights into one another (e.g. a scale into a convolution).
  bool immutable_weights = true;
  /// Store engines without weights (they are refitted from the program at load time).
  bool strip_engine_weights = false;
  /// Refit a cached engine with the same weights it was built with (a sanity mode).
  bool refit_identical_engine_weights = false;
  /// Let fp32 matrix multiplies and convolutions run in TF32 where the backend offers it (cuda; chosen by tactic
  /// timing). Torch-TensorRT allows TF32 unless `disable_tf32`; Kiln keeps fp32 exact unless this is set.
  bool allow_tf32 = false;

  // --- Engine cache ------------------------------------------------------------------------------
  /// Save built engines in the engine cache.
  bool cache_built_engines = false;
  /// Load engines from the engine cache instead of building when the key matches.
  bool reuse_cached_engines = false;
  /// Directory of the on-disk engine cache; empty: default_engine_cache_dir() (engine_cache.h), under the user's
  /// cache directory.
  std::string engine_cache_dir;
  /// Size budget of the on-disk engine cache in bytes (LRU eviction beyond it); 5 GiB as Torch-TensorRT.
  int64_t engine_cache_size = int64_t{5} << 30;

  // --- Runtime -----------------------------------------------------------------------------------
  /// Run each engine through CUDA graphs (recorded per input shapes and buffers, replayed while they repeat;
  /// cuda backend only, ignored on cpu). Stored in the .kiln module, not in the plans: it does not change what is
  /// built (not part of the engine-cache key).
  bool use_cuda_graphs = false;
  /// Build engines when the module is first run rather than when it is loaded.
  bool lazy_engine_init = false;
  /// Partition and report only; build no engines.
  bool dryrun = false;
  /// Verbose compiler logging.
  bool debug = false;
};

}  // namespace kiln::compiler
