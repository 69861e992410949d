// Tactic "nvrtc" for Elementwise, Activation, Unary, Cast, Select and FusedPointwise layers: CUDA C generated
// for the layer (nvrtc_source.h), compiled with NVRTC when the kernel is first created at build time, and
// stored in the plan as device code for the GPU's architecture (Kernel::plan_data), so that a loaded plan
// loads the module without compiling. Modules are loaded when the kernel is created, never in execute().
// Formats: pointwise_formats (a layer follows a ChannelsLast input).

#include <algorithm>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/pointwise/nvrtc_module.h"
#include "engine/backends/cuda/pointwise/nvrtc_source.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/follow_channels_last.h"
#include "kiln/support/logging.h"

namespace kiln::engine::cuda {
namespace {

static_assert(sizeof(NvrtcPwArgs) ==
                  8 * (kMaxPwSources + 2 + kMaxRank + kMaxPwSources * kMaxRank + 2 * kMaxPwSources),
              "NvrtcPwArgs must match the generated Args struct (all 8-byte members, no padding)");

constexpr int kThreads = 256;

class NvrtcPointwiseKernel : public Kernel {
 public:
  explicit NvrtcPointwiseKernel(const LayerInfo& info) : spec_(nvrtc_pointwise_spec(info)) {
    const std::string& name = info.layer->name;
    source_ = nvrtc_pointwise_source(spec_);
    std::vector<std::string> entries = {"kiln_pw_general"};
    if (spec_.fast) entries.push_back("kiln_pw_fast");
    if (spec_.vec) entries.push_back("kiln_pw_vec");
    NvrtcPlanData stored;
    bool use_stored = false;
    if (info.plan_data) {
      stored = decode_nvrtc_plan_data(*info.plan_data, name);
      use_stored = stored.source == source_;
      if (!use_stored) {
        KILN_WARN("engine: layer '", name,
                  "': the plan's nvrtc device code was generated from other source "
                  "(another Kiln version?); compiling it again");
      }
    }
    module_ = nvrtc_module(source_, entries, use_stored ? &stored.cubin : nullptr, stored.arch,
                           "layer '" + name + "' (cuda tactic 'nvrtc')");
    if (info.kind() == LayerKind::FusedPointwise) {
      for (const auto& w : info.layer->weights) {
        weight_dims_.push_back(w.value.sizes());
        weights_.push_back(upload(w.value, w.value.dtype()));
      }
    }
    source_dtype_sizes_.reserve(spec_.program.source_dtypes.size());
    for (DType dt : spec_.program.source_dtypes) source_dtype_sizes_.push_back(dtype_size(dt));
  }

  std::vector<uint8_t> plan_data() const override {
    return encode_nvrtc_plan_data(NvrtcPlanData{module_->arch(), source_, module_->cubin()});
  }

  void execute(KernelArgs& args) const override {
    // Dims in the output's storage order, as the spec (a ChannelsLast layer runs over [N, spatial..., C]).
    const TensorView& y = args.outputs[0];
    const bool cl = y.format != TensorFormat::Plain;
    const size_t rank = y.dims.size();
    const auto order = [&](const Dims& d, TensorFormat f) {
      return pointwise_operand_dims(d, f, y.format, rank);
    };
    const Dims od = cl ? order(y.dims, y.format) : y.dims;
    int64_t n = numel(od);
    if (n == 0) return;
    KILN_CHECK(spec_.index64 || n <= (int64_t{1} << 31), Internal, "nvrtc pointwise: ", n,
               " elements exceed the plan's range");
    NvrtcPwArgs a;
    a.out = args.outputs[0].data;
    a.n = n;
    for (size_t k = 0; k < od.size(); ++k) a.d[k] = od[k];
    bool fast = spec_.fast, vec = spec_.vec;
    auto aligned = [](const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; };
    size_t s = 0;
    auto add = [&](const void* data, const Dims& dims) {
      a.src[s] = data;
      broadcast_strides(dims, od, a.st[s]);
      if (fast) {
        PwIndex p = pw_index(dims, od);
        fast = p.mode == spec_.fast_index[s].mode;
        a.div[s] = p.div;
        a.len[s] = p.len;
        if (p.mode == PwIndexMode::Full) vec = vec && aligned(data, 4 * source_dtype_sizes_[s]);
      }
      ++s;
    };
    for (const auto& in : args.inputs) add(in.data, cl ? order(in.dims, in.format) : in.dims);
    for (size_t w = 0; w < weights_.size(); ++w) {
      add(weights_[w].data(), cl ? order(weight_dims_[w], TensorFormat::Plain) : weight_dims_[w]);
    }
    vec = vec && fast && aligned(a.out, 4 * dtype_size(spec_.program.out_dtype));
    const char* entry = vec ? "kiln_pw_vec" : fast ? "kiln_pw_fast" : "kiln_pw_general";
    int64_t work = vec ? (n + 3) / 4 : n;
    int64_t blocks = std::min<int64_t>((work + kThreads - 1) / kThreads, int64_t{65535} * 32);
    module_->launch(entry, static_cast<unsigned>(blocks), kThreads, &a, args.stream);
  }

 private:
  NvrtcPwSpec spec_;
  std::string source_;
  std::shared_ptr<const NvrtcModule> module_;
  std::vector<DeviceBuffer> weights_;
  std::vector<Dims> weight_dims_;
  std::vector<size_t> source_dtype_sizes_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  if (!pointwise_applies(layer, why)) return false;
  return nvrtc_available(why);
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) {
  return std::make_unique<NvrtcPointwiseKernel>(layer);
}

}  // namespace

void register_nvrtc_pointwise(KernelTable& rows) {
  for (LayerKind k : {LayerKind::Elementwise, LayerKind::Activation, LayerKind::Unary, LayerKind::Cast,
                      LayerKind::Select, LayerKind::FusedPointwise}) {
    rows.add({"nvrtc", k, &applies, &create, &pointwise_formats});
  }
}

}  // namespace kiln::engine::cuda
