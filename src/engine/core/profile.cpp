#include "kiln/engine/profile.h"

#include "kiln/support/error.h"

namespace kiln::engine {

void OptimizationProfile::set_dimensions(const std::string& name, Dims min, Dims opt, Dims max) {
  KILN_CHECK(min.size() == opt.size() && opt.size() == max.size(), InvalidInput, "profile for input '", name,
             "': min/opt/max ranks differ");
  for (size_t i = 0; i < min.size(); ++i) {
    KILN_CHECK(min[i] >= 0 && min[i] <= opt[i] && opt[i] <= max[i], InvalidInput, "profile for input '", name,
               "': dim ", i, " needs 0 <= min <= opt <= max, got ", min[i], "/", opt[i], "/", max[i]);
  }
  ranges_[name] = ShapeRange{std::move(min), std::move(opt), std::move(max)};
}

const ShapeRange& OptimizationProfile::get(const std::string& name) const {
  auto it = ranges_.find(name);
  KILN_CHECK(it != ranges_.end(), InvalidInput, "optimization profile has no range for input '", name, "'");
  return it->second;
}

}  // namespace kiln::engine
