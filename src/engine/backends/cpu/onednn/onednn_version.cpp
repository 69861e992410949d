// The library the cpu backend runs on, for `kiln --version`: oneDNN, as loaded and as built against.

#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.h>

#include "kiln/engine/backend.h"

namespace kiln::engine::cpu {

namespace {

std::string dnnl_runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_OMP: return "OpenMP";
    case DNNL_RUNTIME_TBB: return "TBB";
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    default: return "runtime " + std::to_string(runtime);
  }
}

}  // namespace

std::vector<LibraryVersion> cpu_library_versions() {
  const dnnl_version_t* v = dnnl_version();
  std::string loaded = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  const std::string built = std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) + "." +
                            std::to_string(DNNL_VERSION_PATCH);
  std::string text = loaded + " (" + dnnl_runtime_name(v->cpu_runtime);
  if (loaded != built) text += ", built with " + built;
  return {{"oneDNN", text + ")"}};
}

}  // namespace kiln::engine::cpu
