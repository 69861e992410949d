// Shuffle layers (params: kiln/engine/ops/movement/shuffle.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"
#include "kiln/support/checked_math.h"

namespace kiln::engine::ops {
namespace {

/// dst = src permuted (dst dim i = src dim perm[i]).
void permute_copy(const uint8_t* src, const Dims& sdims, const std::vector<int64_t>& perm, uint8_t* dst,
                  size_t es) {
  size_t r = sdims.size();
  auto sstr = contiguous_strides(sdims);
  Dims ddims(r);
  std::vector<int64_t> pstr(r);
  for (size_t i = 0; i < r; ++i) {
    ddims[i] = sdims[perm[i]];
    pstr[i] = sstr[perm[i]];
  }
  int64_t n = checked_numel(ddims);
  std::vector<int64_t> idx(r, 0);
  int64_t cur = 0;
  for (int64_t e = 0; e < n; ++e) {
    std::memcpy(dst + e * es, src + cur * es, es);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++idx[d] < ddims[d]) {
        cur += pstr[d];
        break;
      }
      cur -= pstr[d] * (ddims[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Shuffle>(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<ShuffleParams>();
  KILN_CHECK(in.size() == 1 || in.size() == 2, InvalidInput, "shuffle takes 1 or 2 inputs");
  auto permute = [](const Dims& d, const std::vector<int64_t>& perm, const char* what) {
    if (perm.empty()) return d;
    KILN_CHECK(perm.size() == d.size(), InvalidInput, what, " has ", perm.size(), " entries for rank ",
               d.size());
    std::vector<bool> seen(d.size(), false);
    Dims out;
    for (int64_t q : perm) {
      KILN_CHECK(q >= 0 && q < static_cast<int64_t>(d.size()) && !seen[q], InvalidInput, what,
                 " is not a permutation");
      seen[q] = true;
      out.push_back(d[q]);
    }
    return out;
  };
  Dims d = permute(in[0].dims, p.first_perm, "first_perm");
  if (p.has_reshape || in.size() == 2) {
    std::vector<int64_t> spec = p.reshape;
    bool spec_known = true;
    if (in.size() == 2) {
      auto v = shape_value(in[1], "shape input");
      if (v) {
        spec = *v;
      } else {
        int64_t len = shape_length(in[1]);
        KILN_CHECK(len >= 0, InvalidInput, "shape input of dynamic length");
        spec.assign(static_cast<size_t>(len), kUnknown);
        spec_known = false;
      }
    }
    Dims out;
    if (!spec_known) {
      out = spec;
    } else {
      int64_t infer_at = -1;
      int64_t prod = 1;
      bool prod_known = true;
      for (size_t i = 0; i < spec.size(); ++i) {
        int64_t s = spec[i];
        if (s == 0) {
          KILN_CHECK(i < d.size(), InvalidInput, "reshape 0 at dim ", i, " beyond input rank ", d.size());
          s = d[i];
          if (s < 0) prod_known = false;
        } else if (s == -1) {
          KILN_CHECK(infer_at < 0, InvalidInput, "reshape has more than one -1");
          infer_at = static_cast<int64_t>(i);
          out.push_back(kUnknown);
          continue;
        } else {
          KILN_CHECK(s > 0, InvalidInput, "reshape dim ", s, " is invalid");
        }
        out.push_back(s);
        if (s >= 0) prod = checked_mul(prod, s, "a reshape's elements");
      }
      bool in_known = dims_known(d);
      int64_t total = 1;
      for (int64_t x : d) total = checked_mul(total, x < 0 ? 1 : x, "a reshape's elements");
      if (infer_at >= 0 && in_known && prod_known) {
        KILN_CHECK(prod > 0 && total % prod == 0, InvalidInput, "cannot reshape ", dims_str(d), " to ",
                   dims_str(spec));
        out[infer_at] = total / prod;
      } else if (infer_at < 0 && in_known && prod_known) {
        KILN_CHECK(total == prod, InvalidInput, "cannot reshape ", dims_str(d), " (", total, " elements) to ",
                   dims_str(out));
      }
    }
    d = out;
  }
  return {{in[0].dtype, permute(d, p.second_perm, "second_perm")}};
}

template <>
void run_kind<LayerKind::Shuffle>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ShuffleParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  if (x.data == y.data) return;  // a reshape the memory plan made a view of its input: nothing moves
  size_t es = dtype_size(x.dtype);
  std::vector<uint8_t> tmp(x.nbytes());
  Dims d = x.dims;
  if (!p.first_perm.empty()) {
    permute_copy(bytes(x), d, p.first_perm, tmp.data(), es);
    Dims nd;
    for (int64_t q : p.first_perm) nd.push_back(d[q]);
    d = nd;
  } else if (x.nbytes()) {
    std::memcpy(tmp.data(), x.data, x.nbytes());
  }
  if (!p.second_perm.empty()) {
    Dims mid(y.dims.size());
    for (size_t i = 0; i < y.dims.size(); ++i) mid[p.second_perm[i]] = y.dims[i];
    permute_copy(tmp.data(), mid, p.second_perm, bytes(y), es);
  } else if (y.nbytes()) {
    std::memcpy(y.data, tmp.data(), y.nbytes());
  }
}

}  // namespace kiln::engine::ops
