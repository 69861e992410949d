// Shuffle (tactic "vec"): a permute before or after a reshape, or a plain reshape, as one strided copy from
// the input straight into the output (the reference kernel copies twice through a temporary; the copy:
// strided_copy.h). A Shuffle with both a first and a second permutation stays with the reference kernel.

#include <vector>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/movement/strided_copy.h"
#include "engine/ops/common.h"

namespace kiln::engine::cpu::fast {
namespace {

class ShuffleKernel : public Kernel {
 public:
  explicit ShuffleKernel(const Layer& layer) : p_(layer.get<ShuffleParams>()) {}

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (x.data == y.data || y.numel() == 0) return;  // a view of its input: nothing moves
    // The source as permuted dims with the input's strides: a first permutation reads x's dims in its order;
    // a second one reads x reshaped to the dims it permutes.
    Dims src = x.dims;
    const std::vector<int64_t>* perm = &p_.first_perm;
    if (!p_.second_perm.empty()) {
      src.assign(y.dims.size(), 0);
      for (size_t i = 0; i < y.dims.size(); ++i) src[p_.second_perm[i]] = y.dims[i];
      perm = &p_.second_perm;
    }
    std::vector<int64_t> src_strides = contiguous_strides(src);
    Dims dims = src;
    std::vector<int64_t> strides = src_strides;
    if (!perm->empty()) {
      for (size_t i = 0; i < perm->size(); ++i) {
        dims[i] = src[(*perm)[i]];
        strides[i] = src_strides[(*perm)[i]];
      }
    }
    strided_copy(plan_copy(dims, strides), dtype_size(x.dtype), x.data, y.data, args.pool);
  }

 private:
  ShuffleParams p_;
};

bool applies(const LayerInfo& info, std::string* why) {
  const auto& p = info.params<ShuffleParams>();
  if (!p.first_perm.empty() && !p.second_perm.empty()) return refuse(why, "two permutations (vec takes one)");
  return strided_copy_applies(info, why);
}

}  // namespace

void register_movement(KernelTable& registry) {
  registry.add(KernelRow{"vec", LayerKind::Shuffle, applies, make_kernel<ShuffleKernel>});
}

}  // namespace kiln::engine::cpu::fast
