// The backend registration table: one row per backend. A new backend adds its files and one row here.

#include "kiln/engine/backend.h"
#include "kiln/support/error.h"

namespace kiln::engine {

namespace cpu {
std::unique_ptr<Backend> create_cpu_backend(const BackendOptions& options);
std::vector<LibraryVersion> cpu_library_versions();
namespace onednn {
bool int8_products_exact(std::string* why);  // onednn_common.h
}  // namespace onednn
}  // namespace cpu
namespace cuda {
std::unique_ptr<Backend> create_cuda_backend(const BackendOptions& options);
std::vector<LibraryVersion> cuda_library_versions();
#ifdef KILN_HAVE_CUDA
constexpr bool kBuilt = true;
#else
constexpr bool kBuilt = false;
std::vector<LibraryVersion> cuda_library_versions() { return {}; }
// A build without a CUDA compiler keeps the row, so that asking for "cuda" says why it is missing.
std::unique_ptr<Backend> create_cuda_backend(const BackendOptions&) {
  KILN_FAIL(Unsupported,
            "engine backend 'cuda': this build of Kiln has no CUDA backend (configure where nvcc is "
            "found, KILN_WITH_CUDA=AUTO or ON)");
}
#endif
}  // namespace cuda

const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> kTable = {
      {"cpu", &cpu::create_cpu_backend, true, &cpu::cpu_library_versions, &cpu::onednn::int8_products_exact},
      {"cuda", &cuda::create_cuda_backend, cuda::kBuilt, &cuda::cuda_library_versions},
  };
  return kTable;
}

bool backend_runs_int8(const std::string& name, std::string* why) {
  for (const auto& e : backend_registry()) {
    if (name != e.name) continue;
    if (e.built && e.int8_exact) return e.int8_exact(why);
    if (why) *why = "backend " + name + " folds no quantize/dequantize pairs";
    return false;
  }
  if (why) *why = "unknown backend " + name;
  return false;
}

std::unique_ptr<Backend> create_backend(const std::string& name, const BackendOptions& options) {
  std::string known;
  for (const auto& e : backend_registry()) {
    if (name == e.name) return e.create(options);
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  KILN_FAIL(Unsupported, "unknown engine backend '", name, "' (known: ", known, ")");
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace kiln::engine
