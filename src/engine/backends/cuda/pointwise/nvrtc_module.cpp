// NVRTC compilation, driver-API module loading and the process-wide module cache (see nvrtc_module.h).

#include "engine/backends/cuda/pointwise/nvrtc_module.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "engine/backends/cuda/cuda_util.h"

namespace kiln::engine::cuda {
namespace {

std::atomic<int64_t> g_compiles{0}, g_stored_loads{0};

// The driver functions this file uses, fetched from the runtime (which loads libcuda itself) so that the
// engine never links libcuda.
struct Driver {
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void**, void**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  std::string error;  // why the driver is unusable, empty when it is

  template <typename F>
  void get(const char* symbol, F& fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &status);
    if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !p) {
      if (error.empty()) {
        error = std::string("driver entry point ") + symbol + " unavailable (" +
                (e != cudaSuccess ? cudaGetErrorString(e) : "not found") + ")";
      }
      return;
    }
    fn = reinterpret_cast<F>(p);
  }
  Driver() {
    get("cuModuleLoadData", module_load_data);
    get("cuModuleGetFunction", module_get_function);
    get("cuModuleUnload", module_unload);
    get("cuLaunchKernel", launch_kernel);
    get("cuGetErrorString", get_error_string);
  }
  std::string describe(CUresult r) const {
    const char* s = nullptr;
    if (get_error_string) get_error_string(r, &s);
    return "CUDA driver error " + std::to_string(static_cast<int>(r)) + (s ? std::string(": ") + s : "");
  }
};

const Driver& driver_table() {
  static const Driver d;
  return d;
}

const Driver& driver() {
  const Driver& d = driver_table();
  KILN_CHECK(d.error.empty(), Unsupported, "cuda tactic 'nvrtc': ", d.error);
  return d;
}

#define KILN_NVRTC_CHECK(expr, what)                                               \
  do {                                                                             \
    nvrtcResult kiln_nvrtc_res_ = (expr);                                          \
    KILN_CHECK(kiln_nvrtc_res_ == NVRTC_SUCCESS, Internal, what, ": NVRTC error ", \
               nvrtcGetErrorString(kiln_nvrtc_res_), " (", #expr, ")");            \
  } while (0)

}  // namespace

std::vector<uint8_t> nvrtc_compile(const std::string& source, int arch, const std::string& what) {
  nvrtcProgram prog = nullptr;
  KILN_NVRTC_CHECK(nvrtcCreateProgram(&prog, source.c_str(), "kiln_pointwise.cu", 0, nullptr, nullptr), what);
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&prog};
  std::string arch_opt = "--gpu-architecture=sm_" + std::to_string(arch);
  // IEEE division and square root, no flush to zero, FMA contraction on: the options nvcc compiled the
  // generic kernel with, so both round alike.
  const char* options[] = {arch_opt.c_str(), "--std=c++17",     "--fmad=true",
                           "--ftz=false",    "--prec-div=true", "--prec-sqrt=true"};
  nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(std::size(options)), options);
  ++g_compiles;
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
      log.resize(n);
      if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    KILN_FAIL(Internal, what, ": NVRTC could not compile the generated kernel for sm_", arch, " (",
              nvrtcGetErrorString(r), "): ", log.empty() ? "no log" : log);
  }
  size_t size = 0;
  KILN_NVRTC_CHECK(nvrtcGetCUBINSize(prog, &size), what);
  KILN_CHECK(size > 0, Internal, what, ": NVRTC produced no device code");
  std::vector<uint8_t> cubin(size);
  KILN_NVRTC_CHECK(nvrtcGetCUBIN(prog, reinterpret_cast<char*>(cubin.data())), what);
  return cubin;
}

namespace {

struct Cache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const NvrtcModule>> modules;  // key: device|arch|source
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: modules may outlive static destruction order
  return *c;
}

}  // namespace

struct NvrtcModuleAccess {
  static std::shared_ptr<NvrtcModule> load(std::vector<uint8_t> cubin, int arch,
                                           const std::vector<std::string>& entry_points,
                                           const std::string& what) {
    const Driver& d = driver();
    KILN_CUDA_CHECK(cudaFree(nullptr));  // makes the runtime's (primary) context current for the driver calls
    std::shared_ptr<NvrtcModule> m(new NvrtcModule);
    m->arch_ = arch;
    m->cubin_ = std::move(cubin);
    CUmodule mod = nullptr;
    CUresult r = d.module_load_data(&mod, m->cubin_.data());
    KILN_CHECK(r == CUDA_SUCCESS, Internal, what, ": loading the nvrtc device code (sm_", arch,
               ") failed: ", d.describe(r));
    m->module_ = mod;
    for (const auto& name : entry_points) {
      CUfunction f = nullptr;
      r = d.module_get_function(&f, mod, name.c_str());
      KILN_CHECK(r == CUDA_SUCCESS, Internal, what, ": the nvrtc device code has no entry point '", name,
                 "': ", d.describe(r));
      m->functions_.emplace_back(name, static_cast<void*>(f));
    }
    return m;
  }
};

NvrtcModule::~NvrtcModule() {
  // At process exit the driver may already be shut down; unloading then fails harmlessly.
  if (module_) {
    if (auto* unload = driver_table().module_unload) unload(static_cast<CUmodule>(module_));
  }
}

bool NvrtcModule::has(const std::string& name) const {
  return std::any_of(functions_.begin(), functions_.end(), [&](const auto& f) { return f.first == name; });
}

void NvrtcModule::launch(const std::string& name, unsigned grid, unsigned block, void* params,
                         void* stream) const {
  void* fn = nullptr;
  for (const auto& f : functions_) {
    if (f.first == name) fn = f.second;
  }
  KILN_CHECK(fn, Internal, "nvrtc module has no entry point '", name, "'");
  const Driver& d = driver();
  void* args[] = {params};
  CUresult r = d.launch_kernel(static_cast<CUfunction>(fn), grid, 1, 1, block, 1, 1, 0,
                               static_cast<CUstream>(stream), args, nullptr);
  KILN_CHECK(r == CUDA_SUCCESS, Internal, "nvrtc kernel '", name, "' launch failed: ", d.describe(r));
}

bool nvrtc_available(std::string* why) {
  static const std::string reason = []() -> std::string {
    try {
      driver();
      int arch = current_compute_capability();
      int n = 0;
      if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return "NVRTC lists no architectures";
      std::vector<int> archs(static_cast<size_t>(n));
      if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return "NVRTC lists no architectures";
      if (std::find(archs.begin(), archs.end(), arch) == archs.end()) {
        return "this NVRTC cannot compile for sm_" + std::to_string(arch);
      }
      return "";
    } catch (const Error& e) {
      return e.message();
    }
  }();
  return reason.empty() || refuse(why, reason);
}

std::shared_ptr<const NvrtcModule> nvrtc_module(const std::string& source,
                                                const std::vector<std::string>& entry_points,
                                                const std::vector<uint8_t>* stored_cubin, int stored_arch,
                                                const std::string& what) {
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  int arch = current_compute_capability();
  if (stored_cubin) {
    KILN_CHECK(stored_arch == arch, InvalidInput, what, ": the plan's nvrtc device code was compiled for sm_",
               stored_arch, " but this GPU is sm_", arch, ": rebuild the plan on this GPU");
  }
  std::string key = std::to_string(device) + "|" + std::to_string(arch) + "|" + source;
  Cache& c = cache();
  // One lock over lookup, compile and load: concurrent builds of the same chain compile it once.
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.modules.find(key);
  if (it != c.modules.end()) return it->second;
  std::shared_ptr<NvrtcModule> m;
  if (stored_cubin) {
    m = NvrtcModuleAccess::load(*stored_cubin, arch, entry_points, what);
    ++g_stored_loads;
  } else {
    m = NvrtcModuleAccess::load(nvrtc_compile(source, arch, what), arch, entry_points, what);
  }
  c.modules.emplace(key, m);
  return m;
}

int64_t nvrtc_compile_count() { return g_compiles.load(); }
int64_t nvrtc_stored_load_count() { return g_stored_loads.load(); }

void nvrtc_clear_module_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.modules.clear();
}

}  // namespace kiln::engine::cuda
