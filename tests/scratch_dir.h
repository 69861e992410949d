#pragma once
// A directory of one test's own for the files it writes, under the system's temporary directory.

#include <unistd.h>

#include <filesystem>
#include <string>

namespace kiln::test_files {

/// <temp>/kiln_<name>_<pid>, emptied first (a crashed earlier run may have left it): the process id keeps
/// apart the test binaries that ctest runs side by side. `create`: false for code under test that must create
/// it.
inline std::filesystem::path scratch_dir(const std::string& name, bool create = true) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kiln_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  if (create) fs::create_directories(dir);
  return dir;
}

}  // namespace kiln::test_files
