#pragma once
// Memory formats of activations between kernels (recorded in the plan per tensor).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/support/dtype.h"

namespace kiln::engine {

/// How an activation is laid out in memory between kernels. Plain is dense C order: every binding, and every
/// tensor a kernel reads or writes unless its tactic asks for another format. The others apply to tensors of
/// rank 3-5, [N, C, spatial...]:
///   Blocked8c / Blocked16c: [N, ceil(C/b), spatial..., b] with the channel tail zero-padded to the block b
///                           (oneDNN's nCw8c/nChw8c/nCdhw8c and their 16c forms);
///   ChannelsLast:           [N, spatial..., C] (nwc/nhwc/ndhwc).
/// One more changes how each element is stored, not where, and applies at any rank:
///   E4M3:                   Plain order, each element one byte, the FP8 E4M3 code of value / scale with the
///                           scale the tensor's dynamic range gives (amax / 448), rounded to nearest even and
///                           saturated (ops::float_to_e4m3). The tensor keeps its floating dtype (what its
///                           value is); FP8 layers read it (cuda "cublaslt_fp8"), and a Reformat or the layer
///                           that writes it quantizes.
/// Formats are chosen by the builder after tactic selection and recorded in the plan per tensor.
enum class TensorFormat : uint8_t { Plain, Blocked8c, Blocked16c, ChannelsLast, E4M3 };
inline constexpr int kNumTensorFormats = static_cast<int>(TensorFormat::E4M3) + 1;
/// "plain", "blocked8c", "blocked16c", "channels_last", "e4m3".
const char* tensor_format_name(TensorFormat format);
/// Whether `format` can hold a tensor of rank `rank` (Plain and E4M3: any; the others: 3-5).
bool format_applies(TensorFormat format, size_t rank);
/// Bytes of one stored element of a `dtype` tensor in `format` (E4M3: 1; the others: the dtype's size).
size_t format_element_size(TensorFormat format, DType dtype);
/// Bytes a tensor of `dims` and `dtype` takes in `format` (dims < 0 count as 0; throws on overflow).
int64_t format_bytes(TensorFormat format, DType dtype, const std::vector<int64_t>& dims);
/// Elements stored for a tensor of `dims` in `format` (blocked formats round C up to the block; dims < 0
/// count as 0).
int64_t format_numel(TensorFormat format, const std::vector<int64_t>& dims);
/// Offset (in elements) of the element with multi-index `index` of a tensor of `dims` stored in `format`.
int64_t format_offset(TensorFormat format, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& index);

/// A tensor stored in a format as a strided view of its storage: logical dim d is the view dims [first[d],
/// first[d + 1]) (outermost first; a blocked format splits C into C / b and b), with element strides.
struct FormatView {
  std::vector<int64_t> dims, strides;
  std::vector<size_t> first;  // rank + 1 entries
};
/// The view of a tensor of `dims` (all >= 0) stored in `format` whose offsets are format_offset's; nullopt
/// where no strided view gives them: a blocked format whose C is not a multiple of the block (the tail block
/// is padded), E4M3 (not the dtype's elements).
std::optional<FormatView> format_view(TensorFormat format, const std::vector<int64_t>& dims);

}  // namespace kiln::engine
