#pragma once
// Every compilation setting, declared once. Torch-TensorRT's names and defaults where the setting exists
// there. From this list come the CompilationSettings fields (compilation_settings.h), the JSON form
// (settings_json.h), the command-line flags (flags.h), the engine-cache key (cache_key.h) and the descriptors
// the Python binding reads (descriptors.h). Adding a setting is one row here (plus its use); docs/settings.md
// says how.
//
// X(kind, name, default, flag, values, scope, help)
//   kind     a kind of value_kinds.h: the field type, the JSON form and the flag parsing
//   name     the field, the JSON key and the Python keyword
//   default  the value of a default-constructed CompilationSettings
//   flag     the `kiln compile`/`kiln inspect --coverage` flag without dashes, "" for none (docs/cli.md lists
//            each)
//   values   the flag's value placeholder in --help; for Choice and Precisions the allowed values,
//            '|'-separated
//   scope    Engine: changes the engines built (engine-invariant, part of the engine-cache key); Runtime:
//            changes only how the module runs; Compile: neither
//   help     one line: the flag's --help text and the descriptor's help
// Flags that set several settings or invert one (--partitioner, --cpu-memory-budget, --cache-dir, --no-cache,
// --refittable) are not settings: they are the shorthands in src/settings/shorthand_flags.cpp.

// clang-format off
#define KILN_SETTINGS(X)                                                                                     \
  /* Precision */                                                                                            \
  X(Precisions, enabled_precisions, {Precision::F32}, "", "f32|f16|bf16|i8|f8", Engine,                      \
    "precisions the engine builder may choose kernels in (i8: INT8, f8: FP8 E4M3, both calibrated on "        \
    "`calibration`)")                                                                                        \
  X(Text, calibration, "", "calibration", "FILE.npz", Compile,                                               \
    "calibration batches of the program inputs for int8 and fp8 (docs/quantization.md); the ranges go in the " \
    "engine-cache key")                                                                                      \
  X(Choice, calibrator, "auto", "calibrator", "auto|percentile|entropy|max", Engine,                         \
    "how calibration picks each tensor's range: auto (default: percentile when int8 is among the "           \
    "precisions, else max for fp8), percentile, entropy (KL), max")                                          \
  X(Real<100>, calibration_percentile, 99.99, "calibration-percentile", "P", Engine,                         \
    "the percentile calibrator's P in (0, 100]: a tensor's range ends where P% of its |x| lie (default "     \
    "99.99)")                                                                                                \
  X(Bool, quantize_first_last, false, "quantize-first-last", "", Engine,                                      \
    "int8/fp8: the first and the last convolution or matmul layer may quantize too (default: they stay "     \
    "floating)")                                                                                             \
  X(Bool, use_explicit_typing, false, "", "", Engine,                                                        \
    "build strongly typed networks: every layer keeps the dtype the graph states")                           \
  X(Bool, truncate_double, false, "", "", Engine, "let float64 tensors run in float32 inside engines")       \
  X(Real<1>, reduced_precision_min_cosine, 0.999, "reduced-precision-min-cosine", "C", Engine,               \
    "fp16/bf16 with sample inputs: earliest layers stay fp32 until the outputs' cosine to fp32 is >= C, "    \
    "in (0, 1] (default 0.999)")                                                                             \
  /* Partitioning */                                                                                         \
  X(Integer<int64_t>, min_block_size, 5, "min-block-size", "N", Compile,                                     \
    "engine segments with fewer compute ops go back to PyTorch (default 5)")                                 \
  X(OpSet, torch_executed_ops, {}, "torch-executed-ops", "a,b", Compile,                                     \
    "operators (overloads or packets) forced to run in PyTorch")                                             \
  X(Bool, require_full_compilation, false, "require-full-compilation", "", Compile,                          \
    "fail unless the whole graph runs in one engine")                                                        \
  X(Bool, assume_dynamic_shape_support, false, "assume-dynamic-shape-support", "", Compile,                  \
    "treat every converter as supporting dynamic shapes")                                                    \
  X(Bool, use_fast_partitioner, true, "", "", Compile,                                                       \
    "true: adjacency (fast) partitioner; false: global partitioner (--partitioner)")                         \
  X(Bool, enable_resource_partitioning, false, "enable-resource-partitioning", "", Compile,                  \
    "split engines whose weights exceed the memory budget")                                                  \
  X(OptionalBytes, cpu_memory_budget, std::nullopt, "", "", Compile,                                         \
    "per-engine weight budget in bytes for resource partitioning; unset: available memory / 4 "              \
    "(--cpu-memory-budget)")                                                                                 \
  /* Engine building */                                                                                      \
  X(Choice, backend, "cpu", "backend", "cpu|cuda", Engine, "engine backend (default cpu)")                   \
  X(Bytes, workspace_size, 0, "", "", Engine,                                                                \
    "builder workspace limit in bytes (0: the backend's default)")                                           \
  X(Integer<int>, optimization_level, 3, "", "", Engine,                                                     \
    "builder optimization level 0..5 (higher: more tactics timed)")                                          \
  X(Integer<int>, num_avg_timing_iters, 1, "", "", Engine,                                                   \
    "timing iterations averaged per tactic candidate")                                                       \
  X(Integer<int>, threads, 0, "threads", "N", Engine,                                                        \
    "cpu: the threads tactics are timed on and the module runs on, saved with it (0: all cores; at most "   \
    "1024)")                                                                                                 \
  X(Text, timing_cache_path, default_timing_cache_path(), "timing-cache", "FILE", Compile,                   \
    "timing cache file (default <user cache dir>/timing_cache.bin: $KILN_CACHE_DIR, else "                   \
    "$XDG_CACHE_HOME/kiln, else ~/.cache/kiln; empty: none)")                                                \
  X(Bool, pass_through_build_failures, false, "", "", Compile,                                               \
    "raise engine build failures instead of falling back to PyTorch for the segment")                        \
  X(Bool, immutable_weights, true, "", "", Compile,                                                          \
    "false: engines are built refittable (--refittable); true lets the builder fold weights into one "       \
    "another")                                                                                               \
  X(Bool, strip_engine_weights, false, "", "", Compile,                                                      \
    "store engines without weights (they are refitted from the program at load time)")                       \
  X(Bool, refit_identical_engine_weights, false, "", "", Compile,                                            \
    "refit a cached engine with the same weights it was built with (a sanity mode)")                         \
  X(Bool, allow_tf32, false, "allow-tf32", "", Engine,                                                       \
    "let fp32 matmuls and convolutions use TF32 tactics (cuda; default: strict fp32)")                       \
  /* Engine cache */                                                                                         \
  X(Bool, cache_built_engines, false, "", "", Compile, "save built engines in the engine cache")             \
  X(Bool, reuse_cached_engines, false, "", "", Compile,                                                      \
    "load engines from the engine cache instead of building when the key matches")                           \
  X(Text, engine_cache_dir, "", "", "", Compile,                                                             \
    "directory of the on-disk engine cache; empty: <user cache dir>/engines (--cache-dir)")                  \
  X(Bytes, engine_cache_size, int64_t{5} << 30, "cache-size", "BYTES", Compile,                              \
    "engine cache size budget (K/M/G suffixes; default 5G), least recently used evicted")                    \
  /* Runtime */                                                                                              \
  X(Bool, use_cuda_graphs, false, "use-cuda-graphs", "", Engine,                                             \
    "run every engine through CUDA graphs, replayed while input shapes and buffers repeat (cuda)")           \
  X(Bool, static_shape_cuda_graphs, true, "", "", Engine,                                                    \
    "run engines whose input shapes are static through CUDA graphs (cuda; default true; --no-cuda-graphs)")  \
  X(Bool, lazy_engine_init, false, "", "", Runtime,                                                          \
    "build engines when the module is first run rather than when it is loaded")                              \
  X(Bool, dryrun, false, "", "", Compile, "partition and report only; build no engines")                     \
  X(Bool, debug, false, "", "", Compile, "verbose compiler logging")
// clang-format on
