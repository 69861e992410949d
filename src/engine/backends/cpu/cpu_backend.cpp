// The CPU backend: kernels from the CPU kernel table (supports, tactics, formats and create_kernel are
// TableBackend's), a thread pool, host memory.

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

class CpuBackend : public TableBackend {
 public:
  explicit CpuBackend(const BackendOptions& options)
      : TableBackend(cpu_kernels(), TacticOrder::LastRegisteredFirst), pool_(options.threads) {
    device_ = "cpu x86_64" + cpu_flags() + " " + std::to_string(pool_.size()) + "t";
  }
  std::string name() const override { return "cpu"; }
  std::string device() const override { return device_; }
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
