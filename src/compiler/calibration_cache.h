#pragma once
// The INT8 calibration cache (TensorRT's calibration cache, read and written by the compiler): an engine
// segment's calibrated dynamic ranges (tensor name -> [min, max]) in `<engine cache
// dir>/calibration/<key>.kcal`, so a second compile of the same program with the same calibration data does
// not calibrate again. The key covers everything the ranges depend on: the segment's engine hash (graph
// structure, shape ranges, engine settings, the calibrator among them), the values of its weights and the
// calibration batches. Entries are authenticated with the user's cache key (HMAC-SHA256,
// kiln/support/cache_dir.h): a forged, edited or corrupt entry is a miss.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/compiler/compilation_settings.h"
#include "kiln/engine/dynamic_range.h"
#include "kiln/ir/graph.h"
#include "kiln/support/host_tensor.h"

namespace kiln::compiler::detail {

using DynamicRanges = std::map<std::string, engine::DynamicRange>;

/// The calibration key (64 hex digits) of a segment with engine hash `engine_hash`.
std::string calibration_key(const std::string& engine_hash, const ir::Graph& segment,
                            const std::vector<std::vector<HostTensor>>& batches);

/// The calibration cache directory for `settings` (`<engine cache dir>/calibration`); empty (no caching) when
/// there is no user cache directory and no engine_cache_dir.
std::string calibration_cache_dir(const CompilationSettings& settings);

/// The ranges stored under `key`, or nothing (no entry, or one that fails authentication or parsing: a
/// warning).
std::optional<DynamicRanges> load_calibration(const std::string& dir, const std::string& key);

/// Stores `ranges` under `key` (atomically); a failure to write is a warning, not an error.
void save_calibration(const std::string& dir, const std::string& key, const DynamicRanges& ranges);

/// A canonical text of `ranges` (what the engine-cache key of an INT8 segment adds).
std::string ranges_text(const DynamicRanges& ranges);

}  // namespace kiln::compiler::detail
