#include "engine/backends/follow_channels_last.h"

#include <algorithm>

#include "kiln/support/error.h"

namespace kiln::engine {
namespace {

/// Lanes of a blocked format (channels per block); 0 for the others.
int64_t block_lanes(TensorFormat f) {
  return f == TensorFormat::Blocked8c ? 8 : f == TensorFormat::Blocked16c ? 16 : 0;
}

bool no_spatial_extent(const Dims& p) {
  return std::all_of(p.begin() + 2, p.end(), [](int64_t v) { return v == 1; });
}

/// Whether a tensor of dims `d`, broadcast to rank `rank`, lies in memory the same in Plain and in the
/// blocked order of `lanes` ([N, C / lanes, spatial..., lanes]): one channel (stored as [N, 1, spatial...,
/// 1]), or channels in whole blocks and no spatial extent (a [N, C, 1, 1] squeeze-excite scale).
bool same_in_blocked(const Dims& d, size_t rank, int64_t lanes) {
  Dims p = padded_to_rank(d, rank);
  return p.size() < 3 || p[1] == 1 || (p[1] % lanes == 0 && no_spatial_extent(p));
}

/// Whether a tensor lies the same in Plain and in `format` (ChannelsLast or a blocked one).
bool same_in(const Dims& d, size_t rank, TensorFormat format) {
  const int64_t lanes = block_lanes(format);
  return lanes == 0 ? same_in_channels_last(d, rank) : same_in_blocked(d, rank, lanes);
}

/// The dims of a tensor as a blocked format of `lanes` stores them, after padding to `rank` (channels in
/// whole blocks, or one channel).
Dims blocked_order(const Dims& d, size_t rank, int64_t lanes) {
  Dims p = padded_to_rank(d, rank);
  const int64_t inner = p[1] == 1 ? 1 : lanes;
  p[1] /= inner;
  p.push_back(inner);
  return p;
}

/// The formats of a pointwise layer following its inputs in `format` (ChannelsLast, or a blocked format where
/// `blocked_ok`); all Plain where no input of the output's rank comes in it or another input cannot follow.
TacticFormats follow(const LayerInfo& info, TensorFormat format) {
  TacticFormats plain{std::vector<TensorFormat>(info.inputs.size(), TensorFormat::Plain),
                      std::vector<TensorFormat>(info.outputs.size(), TensorFormat::Plain)};
  if (info.outputs.size() != 1) return plain;
  const TensorInfo& out = info.outputs[0];
  const size_t r = out.opt.size();
  if (!format_applies(format, r)) return plain;
  const bool any = std::any_of(info.inputs.begin(), info.inputs.end(),
                               [&](const TensorInfo& t) { return t.format == format && t.opt.size() == r; });
  if (!any) return plain;
  const int64_t lanes = block_lanes(format);
  // Blocked: the output's channels fill whole blocks (no padded lanes to keep zero), and every input read in
  // the blocked format has all of them.
  const auto all_channels = [&](const TensorInfo& t) {
    return t.min[1] == out.min[1] && t.max[1] == out.max[1] && t.opt[1] == out.opt[1];
  };
  if (lanes > 0 && (out.min[1] != out.max[1] || out.max[1] <= 0 || out.max[1] % lanes != 0)) return plain;
  const auto same = [&](const TensorInfo& t) {
    return same_in(t.min, r, format) && same_in(t.max, r, format);
  };
  TacticFormats f = plain;
  for (size_t k = 0; k < info.inputs.size(); ++k) {
    const TensorInfo& t = info.inputs[k];
    const bool as_is = t.format == format;
    if (as_is || (!same(t) && t.opt.size() == r)) {
      if (lanes > 0 && !all_channels(t)) return plain;
      f.inputs[k] = format;
    } else if (!same(t)) {
      return plain;
    }
  }
  for (const auto& w : info.layer->weights) {
    if (!same_in(w.value.sizes(), r, format)) return plain;
  }
  f.outputs[0] = format;
  return f;
}

}  // namespace

Dims padded_to_rank(const Dims& d, size_t rank) {
  Dims p(rank - std::min(rank, d.size()), 1);
  p.insert(p.end(), d.begin(), d.end());
  return p;
}

bool same_in_channels_last(const Dims& d, size_t rank) {
  Dims p = padded_to_rank(d, rank);
  return p.size() < 3 || p[1] == 1 || no_spatial_extent(p);
}

Dims channels_last_order(const Dims& d, size_t rank) {
  Dims p = padded_to_rank(d, rank);
  std::rotate(p.begin() + 1, p.begin() + 2, p.end());
  return p;
}

TacticFormats pointwise_formats(const LayerInfo& info) { return follow(info, TensorFormat::ChannelsLast); }

TacticFormats pointwise_formats_following_blocked(const LayerInfo& info) {
  TacticFormats f = follow(info, TensorFormat::ChannelsLast);
  for (TensorFormat blocked : {TensorFormat::Blocked8c, TensorFormat::Blocked16c}) {
    if (f.outputs.size() == 1 && f.outputs[0] != TensorFormat::Plain) break;
    f = follow(info, blocked);
  }
  return f;
}

Dims pointwise_operand_dims(const Dims& d, TensorFormat format, TensorFormat out_format, size_t rank) {
  if (out_format == TensorFormat::Plain) {
    KILN_CHECK(format == TensorFormat::Plain, Internal, "pointwise: an operand in ",
               tensor_format_name(format), " of an output in plain");
    return d;
  }
  const int64_t lanes = block_lanes(out_format);
  KILN_CHECK(out_format == TensorFormat::ChannelsLast || lanes > 0, Internal, "pointwise: an output in ",
             tensor_format_name(out_format));
  KILN_CHECK(format == TensorFormat::Plain ? same_in(d, rank, out_format) : format == out_format, Internal,
             "pointwise: an operand in ", tensor_format_name(format), " of an output in ",
             tensor_format_name(out_format));
  if (lanes == 0) return channels_last_order(d, rank);
  const Dims p = padded_to_rank(d, rank);
  KILN_CHECK(p.size() >= 3 && (p[1] == 1 || p[1] % lanes == 0), Internal,
             "pointwise: ", p.size() >= 3 ? p[1] : 0, " channels in ", tensor_format_name(out_format),
             " (whole blocks or one channel only)");
  return blocked_order(d, rank, lanes);
}

}  // namespace kiln::engine
