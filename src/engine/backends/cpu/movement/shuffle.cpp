// Shuffle (tactic "vec"): a permute before or after a reshape, or a plain reshape, as one strided copy from
// the input straight into the output (the reference kernel copies twice through a temporary; the copy:
// strided_copy.h). A Shuffle with both a first and a second permutation stays with the reference kernel. A
// permute (or none) before any reshape also reads a channels-last or blocked input (ConvNeXt's permute of a
// depthwise convolution's output to [N, H, W, C]): the input's format as strides (format_view), a blocked C
// split into C / b and b, so the copy is as plain a copy as the memory allows (channels-last to NHWC: one
// memcpy).

#include <optional>
#include <vector>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/movement/strided_copy.h"
#include "engine/ops/common.h"
#include "kiln/engine/ops/tensor_format.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::fast {
namespace {

class ShuffleKernel : public Kernel {
 public:
  explicit ShuffleKernel(const Layer& layer) : p_(layer.get<ShuffleParams>()) {}

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (x.data == y.data || y.numel() == 0) return;  // a view of its input: nothing moves
    // The source as permuted dims with the input's strides: a first permutation reads x's dims (in x's
    // format) in its order; a second one reads x (plain) reshaped to the dims it permutes.
    Dims src = x.dims;
    TensorFormat format = x.format;
    const std::vector<int64_t>* perm = &p_.first_perm;
    if (!p_.second_perm.empty()) {
      src.assign(y.dims.size(), 0);
      for (size_t i = 0; i < y.dims.size(); ++i) src[p_.second_perm[i]] = y.dims[i];
      perm = &p_.second_perm;
      format = TensorFormat::Plain;  // (shuffle_formats reads plain inputs here)
    }
    const std::optional<FormatView> view = format_view(format, src);
    KILN_CHECK(view.has_value(), Internal, "shuffle: no strided view of a ", tensor_format_name(format),
               " input of ", src.size(), " dims");
    Dims dims;
    std::vector<int64_t> strides;
    for (size_t i = 0; i < src.size(); ++i) {
      const size_t d = perm->empty() ? i : static_cast<size_t>((*perm)[i]);
      for (size_t k = view->first[d]; k < view->first[d + 1]; ++k) {
        dims.push_back(view->dims[k]);
        strides.push_back(view->strides[k]);
      }
    }
    strided_copy(plan_copy(dims, strides), dtype_size(x.dtype), x.data, y.data, args.pool);
  }

 private:
  ShuffleParams p_;
};

/// Whether the kernel reads a channels-last or blocked input as it is, through format_view: a permute (or
/// none) before any reshape, static channels, a multiple of a blocked format's block. Any other input is read
/// Plain (the builder reformats it first).
bool reads_as_stored(const LayerInfo& info) {
  const TensorInfo& x = info.inputs[0];
  return x.format != TensorFormat::Plain && x.format != TensorFormat::E4M3 &&
         info.params<ShuffleParams>().second_perm.empty() && x.max.size() >= 2 && x.min[1] == x.max[1] &&
         format_view(x.format, x.max).has_value();
}

/// Input 0 as stored where the kernel reads it so, every other tensor (a dynamic reshape's shape input, the
/// output) Plain.
TacticFormats shuffle_formats(const LayerInfo& info) {
  TacticFormats f{std::vector<TensorFormat>(info.inputs.size(), TensorFormat::Plain),
                  std::vector<TensorFormat>(info.outputs.size(), TensorFormat::Plain)};
  if (reads_as_stored(info)) f.inputs[0] = info.inputs[0].format;
  return f;
}

bool applies(const LayerInfo& info, std::string* why) {
  const auto& p = info.params<ShuffleParams>();
  if (!p.first_perm.empty() && !p.second_perm.empty()) return refuse(why, "two permutations (vec takes one)");
  const size_t es = dtype_size(info.inputs[0].dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8) return refuse(why, std::to_string(es) + "-byte elements");
  if (info.inputs[0].format == TensorFormat::E4M3 || info.outputs[0].format == TensorFormat::E4M3) {
    return refuse(why, "E4M3 tensors");
  }
  return true;
}

}  // namespace

void register_movement(KernelTable& registry) {
  registry.add(KernelRow{.name = "vec",
                         .kind = LayerKind::Shuffle,
                         .applies = applies,
                         .create = make_kernel<ShuffleKernel>,
                         .formats = shuffle_formats});
}

}  // namespace kiln::engine::cpu::fast
