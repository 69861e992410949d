// The CPU backend: kernels from the CPU kernel table, a thread pool, host memory.

#include <cstdlib>
#include <fstream>
#include <thread>

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/backends/cpu/onednn/onednn_common.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu {
namespace {

std::string cpu_flags() {
  std::string out;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) out += " avx512f";
  else if (__builtin_cpu_supports("avx2")) out += " avx2";
  return out;
}

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(const BackendOptions& options) : pool_(options.threads) {
    device_ = "cpu x86_64" + cpu_flags() + " " + std::to_string(pool_.size()) + "t";
  }
  std::string name() const override { return "cpu"; }
  std::string device() const override { return device_; }
  bool supports(const LayerInfo& layer, std::string* why) const override {
    if (!cpu_kernels().candidates(layer).empty()) return true;
    if (why) *why = std::string("no CPU kernel for ") + layer_kind_name(layer.kind()) + " with these dtypes";
    return false;
  }
  bool supports_precision(LayerKind, DType dtype) const override {
    return dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
  }
  bool fuses_post_ops(const Layer& layer) const override {
    // Convolution and matrix multiply run fused only in oneDNN (the reference kernels are 10-50x slower).
    if (layer.kind == LayerKind::Convolution) return onednn::post_ops_supported(layer.get<ConvolutionParams>().post_ops);
    if (layer.kind == LayerKind::MatrixMultiply) {
      return onednn::post_ops_supported(layer.get<MatrixMultiplyParams>().post_ops);
    }
    return true;
  }
  std::vector<Tactic> tactics(const LayerInfo& layer) const override {
    std::vector<Tactic> out;
    // Preference order: fast kernels (registered after "ref") before the reference, the last registered first
    // (for convolution "onednn_blocked", the layout oneDNN picks itself, before plain "onednn").
    auto c = cpu_kernels().candidates(layer);
    for (auto it = c.rbegin(); it != c.rend(); ++it) out.push_back({(*it)->name, (*it)->reduced_precision});
    return out;
  }
  TacticFormats formats(const LayerInfo& layer, const std::string& tactic) const override {
    if (layer.kind() == LayerKind::Reformat) {
      const auto& p = layer.params<ReformatParams>();
      return {{p.from}, {p.to}};
    }
    const CpuKernelFactory* f = cpu_kernels().find(layer.kind(), tactic);
    if (!f || !f->formats) return {};
    return f->formats(layer);
  }
  std::unique_ptr<Kernel> create_kernel(const LayerInfo& layer, const std::string& tactic) const override {
    const CpuKernelFactory* f = cpu_kernels().find(layer.kind(), tactic);
    KILN_CHECK(f != nullptr, Unsupported, "CPU backend has no tactic '", tactic, "' for ", layer_kind_name(layer.kind()));
    KILN_CHECK(!f->applies || f->applies(layer), Unsupported, "CPU tactic '", tactic, "' does not apply to layer '",
               layer.layer->name, "'");
    // Kernels without a formats function read and write Plain only; a Reformat converts exactly as its params say.
    if (layer.kind() == LayerKind::Reformat) {
      const auto& p = layer.params<ReformatParams>();
      KILN_CHECK(layer.inputs.size() == 1 && layer.outputs.size() == 1 && layer.inputs[0].format == p.from &&
                     layer.outputs[0].format == p.to,
                 InvalidInput, "reformat layer '", layer.layer->name, "': tensor formats differ from its params");
    } else if (!f->formats) {
      for (const auto* list : {&layer.inputs, &layer.outputs}) {
        for (const TensorInfo& t : *list) {
          KILN_CHECK(t.format == TensorFormat::Plain, InvalidInput, "layer '", layer.layer->name, "': CPU tactic '",
                     tactic, "' cannot use tensor '", t.name, "' in format ", tensor_format_name(t.format));
        }
      }
    }
    return f->create(layer);
  }
  ThreadPool* thread_pool() const override { return &pool_; }
  void* allocate(size_t bytes) const override {
    size_t n = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n ? n : 64);
    KILN_CHECK(p != nullptr, Io, "out of host memory allocating ", bytes, " bytes");
    return p;
  }
  void deallocate(void* pointer) const override { std::free(pointer); }

 private:
  mutable ThreadPool pool_;
  std::string device_;
};

}  // namespace

std::unique_ptr<Backend> create_cpu_backend(const BackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace kiln::engine::cpu
