#pragma once
// Device code compiled at build time with NVRTC and loaded with the CUDA driver API (tactic "nvrtc").
//
// A process-wide cache maps (device, architecture, source) to the loaded module, so identical chains compile
// once per process (modules stay loaded for the life of the process or until the cache is cleared and no
// kernel holds them). A module comes from the cache, else from device code stored in a loaded plan (no
// compiler involved), else from NVRTC. The driver API is reached through the runtime's driver entry points,
// so nothing links libcuda (binaries still start on machines without a GPU driver).
// Plain C++ header (no CUDA headers) for the tests' hooks.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::engine::cuda {

/// A loaded module with its entry points. Immutable; shared by every kernel made from the same source.
class NvrtcModule {
 public:
  ~NvrtcModule();
  NvrtcModule(const NvrtcModule&) = delete;
  NvrtcModule& operator=(const NvrtcModule&) = delete;
  /// The compute capability the device code is for (90 = sm_90).
  int arch() const { return arch_; }
  /// The device code (CUBIN), as the plan stores it.
  const std::vector<uint8_t>& cubin() const { return cubin_; }
  /// Whether entry point `name` exists.
  bool has(const std::string& name) const;
  /// Enqueues entry point `name` on `stream` with `params` pointing at its one by-value parameter
  /// (capturable into CUDA graphs: no allocation, no synchronization). Throws kiln::Error on failure.
  void launch(const std::string& name, unsigned grid, unsigned block, void* params, void* stream) const;

 private:
  friend struct NvrtcModuleAccess;
  NvrtcModule() = default;
  int arch_ = 0;
  std::vector<uint8_t> cubin_;
  void* module_ = nullptr;                                // CUmodule
  std::vector<std::pair<std::string, void*>> functions_;  // name -> CUfunction
};

/// Whether NVRTC can compile for the current device (`why` says why not).
bool nvrtc_available(std::string* why);

/// The module of `source` with `entry_points` for the current device: from the cache, else from
/// `stored_cubin` (device code a plan holds, compiled for `stored_arch` from this same source; an arch other
/// than the device's is a kiln::Error), else compiled with NVRTC (a compile error is a kiln::Error with the
/// NVRTC log). `what` names the layer in errors.
std::shared_ptr<const NvrtcModule> nvrtc_module(const std::string& source,
                                                const std::vector<std::string>& entry_points,
                                                const std::vector<uint8_t>* stored_cubin, int stored_arch,
                                                const std::string& what);

/// Compiles `source` to CUBIN for sm_<arch> (no GPU needed); a compile error is a kiln::Error with the NVRTC
/// log. Counted by nvrtc_compile_count().
std::vector<uint8_t> nvrtc_compile(const std::string& source, int arch, const std::string& what);

/// Test hooks: NVRTC compilations and loads of stored device code in this process, and dropping the cache.
int64_t nvrtc_compile_count();
int64_t nvrtc_stored_load_count();
void nvrtc_clear_module_cache();

}  // namespace kiln::engine::cuda
