// Finding the PyTorch plug-in (torch_plugin.h): registered, already loaded, or loaded with dlopen.

#include "kiln/runtime/torch_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "kiln/support/error.h"
#include "kiln/support/version.h"

namespace kiln::runtime {
namespace {

std::mutex plugin_mutex;
const TorchPlugin* registered_plugin = nullptr;

using PluginEntry = const TorchPlugin* (*)();

// The folder of the library (or program) this code was linked into.
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_folder), &info) == 0 || info.dli_fname == nullptr) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

const TorchPlugin* load_entry(void* handle) {
  auto entry = reinterpret_cast<PluginEntry>(dlsym(handle, kTorchPluginSymbol));
  return entry != nullptr ? entry() : nullptr;
}

// dlopen's reason, where the file exists (a plug-in whose libtorch is missing says so).
std::string try_open(const std::string& file, const TorchPlugin*& plugin) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return why != nullptr ? why : "dlopen failed";
  }
  plugin = load_entry(handle);
  return plugin != nullptr ? "" : file + " exports no " + kTorchPluginSymbol;
}

const TorchPlugin* find_plugin(const std::string& need) {
  if (registered_plugin != nullptr) return registered_plugin;
  if (const TorchPlugin* loaded = load_entry(RTLD_DEFAULT)) return loaded;
  const std::string advice =
      "install Kiln's PyTorch part (lib/" + std::string(kTorchPluginFile) +
      " and libtorch's libraries on the library path) or set KILN_TORCH_PLUGIN to the plug-in's path";
  const TorchPlugin* plugin = nullptr;
  if (const char* env = std::getenv("KILN_TORCH_PLUGIN"); env != nullptr && *env != '\0') {
    const std::string why = try_open(env, plugin);
    KILN_CHECK(plugin != nullptr, Unsupported, "the module has ", need, ", which need Kiln's PyTorch plug-in: ",
               "KILN_TORCH_PLUGIN=", env, " cannot be loaded (", why, "); ", advice);
    return plugin;
  }
  const std::string folder = own_folder();
  std::string reasons;
  if (!folder.empty()) {
    const std::string next_to = folder + "/" + kTorchPluginFile;
    if (std::filesystem::exists(next_to)) {
      const std::string why = try_open(next_to, plugin);
      if (plugin != nullptr) return plugin;
      reasons = next_to + ": " + why + "; ";
    }
  }
  const std::string why = try_open(kTorchPluginFile, plugin);
  if (plugin != nullptr) return plugin;
  KILN_FAIL(Unsupported, "the module has ", need, ", which need Kiln's PyTorch plug-in ", kTorchPluginFile, ": ",
            reasons.empty() ? "not found in " + (folder.empty() ? std::string("this program's folder") : folder) +
                                  " nor on the library path (" + why + ")"
                            : reasons + "not on the library path either",
            "; ", advice);
}

}  // namespace

std::string kiln_build_id() { return std::string(kiln_version()) + " " + kiln_git_revision(); }

void register_torch_plugin(const TorchPlugin* plugin) {
  std::lock_guard<std::mutex> lock(plugin_mutex);
  registered_plugin = plugin;
}

const TorchPlugin& torch_plugin(const std::string& need) {
  std::lock_guard<std::mutex> lock(plugin_mutex);
  const TorchPlugin* plugin = find_plugin(need);
  KILN_CHECK(plugin->build() == kiln_build_id(), Unsupported, "Kiln's PyTorch plug-in belongs to Kiln ",
             plugin->build(), ", this runtime is Kiln ", kiln_build_id(), ": install both from one build");
  registered_plugin = plugin;
  return *plugin;
}

}  // namespace kiln::runtime
