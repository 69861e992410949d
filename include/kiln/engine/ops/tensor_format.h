#pragma once
// Memory formats of activations between kernels (recorded in the plan per tensor).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::engine {

/// How an activation is laid out in memory between kernels. Plain is dense C order: every binding, and every
/// tensor a kernel reads or writes unless its tactic asks for another format. The others apply to tensors of
/// rank 3-5, [N, C, spatial...]:
///   Blocked8c / Blocked16c: [N, ceil(C/b), spatial..., b] with the channel tail zero-padded to the block b
///                           (oneDNN's nCw8c/nChw8c/nCdhw8c and their 16c forms);
///   ChannelsLast:           [N, spatial..., C] (nwc/nhwc/ndhwc).
/// Formats are chosen by the builder after tactic selection and recorded in the plan per tensor.
enum class TensorFormat : uint8_t { Plain, Blocked8c, Blocked16c, ChannelsLast };
inline constexpr int kNumTensorFormats = static_cast<int>(TensorFormat::ChannelsLast) + 1;
/// "plain", "blocked8c", "blocked16c", "channels_last".
const char* tensor_format_name(TensorFormat format);
/// Whether `format` can hold a tensor of rank `rank` (Plain: any; the others: 3-5).
bool format_applies(TensorFormat format, size_t rank);
/// Elements stored for a tensor of `dims` in `format` (blocked formats round C up to the block; dims < 0
/// count as 0).
int64_t format_numel(TensorFormat format, const std::vector<int64_t>& dims);
/// Offset (in elements) of the element with multi-index `index` of a tensor of `dims` stored in `format`.
int64_t format_offset(TensorFormat format, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& index);

}  // namespace kiln::engine
