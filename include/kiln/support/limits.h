#pragma once
// Resource limits on untrusted input, in one place. docs/limits.md lists each with its reason; a change here
// changes that page.

#include <cstddef>
#include <cstdint>

namespace kiln {

/// The deepest nesting of arrays and objects Kiln accepts in a JSON document (model.json, module.json, ...).
/// torch.export's model.json nests about 10 levels; the bound keeps recursive serialization (nlohmann's dump(),
/// the IR printers) far from the stack's end.
inline constexpr size_t kMaxJsonDepth = 512;

/// The largest extent of one tensor dim (static size, stride or storage offset in model.json, dim in a plan file):
/// 2^40. No real tensor comes near it, and products of a few such extents stay checkable in int64.
inline constexpr int64_t kMaxDimExtent = int64_t{1} << 40;

/// The largest activation arena an engine plan may reserve for its profile's max shapes (1 TiB). A build over
/// it fails (narrow the input ranges); a plan file claiming more is rejected at load.
inline constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;

}  // namespace kiln
