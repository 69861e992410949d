#include "engine/backends/follow_channels_last.h"

#include <algorithm>

#include "kiln/support/error.h"

namespace kiln::engine {

Dims padded_to_rank(const Dims& d, size_t rank) {
  Dims p(rank - std::min(rank, d.size()), 1);
  p.insert(p.end(), d.begin(), d.end());
  return p;
}

bool same_in_channels_last(const Dims& d, size_t rank) {
  Dims p = padded_to_rank(d, rank);
  return p.size() < 3 || p[1] == 1 || std::all_of(p.begin() + 2, p.end(), [](int64_t v) { return v == 1; });
}

Dims channels_last_order(const Dims& d, size_t rank) {
  Dims p = padded_to_rank(d, rank);
  std::rotate(p.begin() + 1, p.begin() + 2, p.end());
  return p;
}

TacticFormats pointwise_formats(const LayerInfo& info) {
  constexpr TensorFormat kCl = TensorFormat::ChannelsLast;
  TacticFormats plain{std::vector<TensorFormat>(info.inputs.size(), TensorFormat::Plain),
                      std::vector<TensorFormat>(info.outputs.size(), TensorFormat::Plain)};
  if (info.outputs.size() != 1) return plain;
  const size_t r = info.outputs[0].opt.size();
  const auto same = [&](const TensorInfo& t) {
    return same_in_channels_last(t.min, r) && same_in_channels_last(t.max, r);
  };
  bool follow = format_applies(kCl, r) &&
                std::any_of(info.inputs.begin(), info.inputs.end(),
                            [&](const TensorInfo& t) { return t.format == kCl && t.opt.size() == r; });
  if (!follow) return plain;
  TacticFormats f = plain;
  for (size_t k = 0; k < info.inputs.size(); ++k) {
    const TensorInfo& t = info.inputs[k];
    if (t.format == kCl || (!same(t) && t.opt.size() == r)) {
      f.inputs[k] = kCl;
    } else if (!same(t)) {
      return plain;
    }
  }
  for (const auto& w : info.layer->weights) {
    if (!same_in_channels_last(w.value.sizes(), r)) return plain;
  }
  f.outputs[0] = kCl;
  return f;
}

Dims pointwise_operand_dims(const Dims& d, TensorFormat format, TensorFormat out_format, size_t rank) {
  const bool cl = out_format == TensorFormat::ChannelsLast;
  KILN_CHECK(cl || out_format == TensorFormat::Plain, Internal, "pointwise: an output in ",
             tensor_format_name(out_format));
  KILN_CHECK(
      format == TensorFormat::Plain ? (!cl || same_in_channels_last(d, rank)) : (cl && format == out_format),
      Internal, "pointwise: an operand in ", tensor_format_name(format), " of an output in ",
      tensor_format_name(out_format));
  return cl ? channels_last_order(d, rank) : d;
}

}  // namespace kiln::engine
