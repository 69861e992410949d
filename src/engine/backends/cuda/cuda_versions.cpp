// The libraries the cuda backend runs on, for `kiln --version`: the CUDA runtime and driver, cuBLASLt, NVRTC and
// cuDNN (when built with it), as loaded in this process and as built against. Needs no GPU.

#include <cuda_runtime_api.h>
#include <cublasLt.h>
#include <nvrtc.h>

#include <string>
#include <vector>

#ifdef KILN_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "kiln/engine/backend.h"

namespace kiln::engine::cuda {

namespace {

// "12.8" from CUDA's 1000 * major + 10 * minor.
std::string cuda_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// "9.19.0" from 10000 * major + 100 * minor + patch (cuDNN 9, cuBLASLt).
std::string triple_text(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." + std::to_string(v % 100);
}

std::string with_built(const std::string& loaded, const std::string& built) {
  return loaded == built ? loaded : loaded + " (built with " + built + ")";
}

}  // namespace

std::vector<LibraryVersion> cuda_library_versions() {
  std::vector<LibraryVersion> out;
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  out.push_back({"CUDA runtime", with_built(cuda_text(runtime), cuda_text(CUDART_VERSION))});
  // 0 when no driver is installed (a machine without a GPU).
  cudaDriverGetVersion(&driver);
  out.push_back({"CUDA driver", driver > 0 ? cuda_text(driver) : std::string("none")});
  out.push_back({"cuBLASLt", triple_text(cublasLtGetVersion())});
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  out.push_back({"NVRTC", std::to_string(major) + "." + std::to_string(minor)});
#ifdef KILN_HAVE_CUDNN
  out.push_back({"cuDNN", with_built(triple_text(cudnnGetVersion()), triple_text(CUDNN_VERSION))});
#else
  out.push_back({"cuDNN", "not built with it"});
#endif
  return out;
}

}  // namespace kiln::engine::cuda
