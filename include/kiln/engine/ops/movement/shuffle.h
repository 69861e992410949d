#pragma once
// Shuffle layers: transpose, reshape, transpose.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// first_perm transpose, then reshape (when has_reshape; 0 copies the input dim, -1 is inferred; or taken
/// from the optional shape-tensor input 1), then second_perm transpose. Empty perms mean identity.
struct ShuffleParams {
  std::vector<int64_t> first_perm;
  bool has_reshape = false;
  std::vector<int64_t> reshape;
  std::vector<int64_t> second_perm;
  KILN_VISIT_FIELDS(v("first_perm", first_perm); v("has_reshape", has_reshape); v("reshape", reshape);
                    v("second_perm", second_perm))
};

}  // namespace kiln::engine
