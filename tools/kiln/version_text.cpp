#include "version_text.h"

#include <torch/version.h>

#include "kiln/engine/backend.h"
#include "kiln/support/version.h"

namespace kiln::cli {

std::string version_text() {
  std::string text = std::string("kiln ") + kiln_version() + " (revision " + kiln_git_revision() + ")\n";
  std::string backends, libraries;
  for (const engine::BackendEntry& entry : engine::backend_registry()) {
    if (!entry.built) continue;
    backends += (backends.empty() ? "" : ", ") + std::string(entry.name);
    for (const engine::LibraryVersion& library : entry.libraries()) {
      libraries += "  " + library.name + " " + library.version + " (" + entry.name + ")\n";
    }
  }
  text += "backends: " + backends + "\nlibraries:\n" + libraries;
  // The PyTorch fallback (and the runtime's PyTorch runs), as built against.
  text += "  libtorch " + std::string(TORCH_VERSION) + " (PyTorch segments)";
  return text;
}

}  // namespace kiln::cli
