#pragma once
// OptimizationProfile: min/opt/max dims for each network input with dynamic dims. The builder tunes
// kernels at `opt` and sizes memory for `max`; at run time every input shape must lie in [min, max].

#include <map>
#include <string>

#include "kiln/engine/layers.h"

namespace kiln::engine {

/// The range of one input's dims.
struct ShapeRange {
  Dims min, opt, max;
};

class OptimizationProfile {
 public:
  /// Sets the range of input `name`; min <= opt <= max per dim, all >= 0, equal ranks (checked here).
  void set_dimensions(const std::string& name, Dims min, Dims opt, Dims max);
  /// Whether a range is set for `name`.
  bool has(const std::string& name) const { return ranges_.count(name) != 0; }
  /// The range of `name`; throws kiln::Error when none is set.
  const ShapeRange& get(const std::string& name) const;
  const std::map<std::string, ShapeRange>& ranges() const { return ranges_; }

 private:
  std::map<std::string, ShapeRange> ranges_;
};

}  // namespace kiln::engine
