// Reformat layers (params: kiln/engine/ops/movement/reformat.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Reformat>(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<ReformatParams>();
  KILN_CHECK(in.size() == 1, InvalidInput, "reformat needs 1 input");
  for (TensorFormat f : {p.from, p.to}) {
    KILN_CHECK(format_applies(f, in[0].dims.size()), InvalidInput, "format ", tensor_format_name(f),
               " does not apply to rank ", in[0].dims.size());
  }
  return {{in[0].dtype, in[0].dims}};
}

/// Copies every element from the input's format to the output's (any dtype); a blocked output's padded
/// channel tail is zeroed. Layouts only: E4M3 (an element encoding with the tensor's scale) is refused.
template <>
void run_kind<LayerKind::Reformat>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ReformatParams>();
  const TensorView& x = args.inputs[0];
  const TensorView& y = args.outputs[0];
  KILN_CHECK(x.format == p.from && y.format == p.to, Internal, "reformat '", layer.name, "': buffers are ",
             tensor_format_name(x.format), " -> ", tensor_format_name(y.format), ", the layer says ",
             tensor_format_name(p.from), " -> ", tensor_format_name(p.to));
  KILN_CHECK(p.from != TensorFormat::E4M3 && p.to != TensorFormat::E4M3, Unsupported, "reformat '", layer.name,
             "': the reference moves elements between layouts; it does not quantize to or from e4m3");
  size_t es = dtype_size(x.dtype);
  if (y.nbytes()) std::memset(y.data, 0, y.nbytes());
  int64_t n = x.numel();
  std::vector<int64_t> index(x.dims.size(), 0);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(y.data);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int64_t k = static_cast<int64_t>(x.dims.size()) - 1; k >= 0; --k) {
      index[k] = rest % x.dims[k];
      rest /= x.dims[k];
    }
    std::memcpy(dst + format_offset(p.to, y.dims, index) * es,
                src + format_offset(p.from, x.dims, index) * es, es);
  }
}

}  // namespace kiln::engine::ops
