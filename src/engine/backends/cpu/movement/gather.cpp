// Gather (tactic "vec"), default mode: out[o, j, :] = x[o, index[j], :] with the indices read, wrapped and
// checked once per call (the reference converts each through double), then one memcpy per row of the inner
// dims, rows split over the pool. Along the last dim (inner 1, rotary embeddings' rotate_half) a row is one
// element. Out-of-range indices are an error, as in the reference kernel.

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/ops/common.h"

namespace kiln::engine::cpu::fast {
namespace {

/// Rows (of `inner` elements) copied per pool task, about 64 KB of them at least.
int64_t rows_per_task(int64_t row_bytes) {
  return std::max<int64_t>(1, (int64_t{64} << 10) / std::max<int64_t>(row_bytes, 1));
}

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(const Layer& layer) : p_(layer.get<GatherParams>()) {}

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &ix = args.inputs[1], &y = args.outputs[0];
    const ops::Split s = ops::split_at(x.dims, p_.axis);
    const int64_t ni = ix.numel();
    std::vector<int64_t> index(static_cast<size_t>(ni));
    for (int64_t j = 0; j < ni; ++j) {
      const int64_t v = ix.dtype == DType::Int32 ? ix.as<int32_t>()[j] : ix.as<int64_t>()[j];
      const int64_t i = v < 0 ? v + s.n : v;
      KILN_CHECK(i >= 0 && i < s.n, InvalidInput, "index ", v, " out of range for size ", s.n);
      index[static_cast<size_t>(j)] = i;
    }
    const int64_t row = s.inner * static_cast<int64_t>(dtype_size(x.dtype));
    if (row == 0 || ni == 0 || s.outer == 0) return;
    const auto* in = static_cast<const char*>(x.data);
    auto* out = static_cast<char*>(y.data);
    ops::parallel(args.pool, s.outer * ni, rows_per_task(row), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / ni, j = r % ni;
        std::memcpy(out + r * row, in + (o * s.n + index[static_cast<size_t>(j)]) * row,
                    static_cast<size_t>(row));
      }
    });
  }

 private:
  GatherParams p_;
};

bool applies(const LayerInfo& info, std::string* why) {
  if (info.params<GatherParams>().mode != GatherParams::Default)
    return refuse(why, "elements mode (vec: default)");
  const DType t = info.inputs[1].dtype;
  if (t != DType::Int32 && t != DType::Int64) return refuse(why, "an index that is not int32 or int64");
  return true;
}

}  // namespace

void register_gather(KernelTable& registry) {
  registry.add(KernelRow{"vec", LayerKind::Gather, applies, make_kernel<GatherKernel>});
}

}  // namespace kiln::engine::cpu::fast
