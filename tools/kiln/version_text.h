#pragma once
// What `kiln --version` prints: the version and git revision, the engine backends this build has and the
// libraries they and the PyTorch fallback run on (docs/cli.md).

#include <string>

namespace kiln::cli {

/// Several lines, the first "kiln VERSION (revision REV)".
std::string version_text();

}  // namespace kiln::cli
