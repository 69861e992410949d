#pragma once
// Bounds on untrusted JSON documents (models/model.json, module.json, engine-cache headers, ...), checked on the
// raw text before any parser or serializer that recurses per nesting level sees it. docs/limits.md lists them.

#include <cstddef>
#include <string>
#include <string_view>

#include "kiln/support/limits.h"

namespace kiln {

/// The deepest nesting of arrays and objects in `text`, counting brackets outside string literals. Stops
/// scanning (and returns a value above `stop_after`) as soon as the depth exceeds `stop_after`.
size_t json_nesting_depth(std::string_view text, size_t stop_after = kMaxJsonDepth);

/// Throws kiln::Error(InvalidInput) "<what> nests arrays/objects deeper than 512 levels" when the nesting of
/// `text` exceeds kMaxJsonDepth. `what` names the document ("models/model.json").
void check_json_depth(std::string_view text, const std::string& what);

}  // namespace kiln
