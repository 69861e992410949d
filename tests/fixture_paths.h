#pragma once
// The bundled fixture programs in tests/data/<name>/ (model.pt2 and, where present, model_core_aten.pt2), for
// suites that run every fixture. KILN_TEST_DATA_DIR is defined per test suite by cmake/KilnLayer.cmake.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::test_data {

/// Paths of every tests/data/<name>/model*.pt2, sorted.
inline std::vector<std::string> fixture_programs() {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  const fs::path root(KILN_TEST_DATA_DIR);
  if (!fs::exists(root)) return paths;
  for (const auto& dir : fs::directory_iterator(root)) {
    for (const char* file : {"model.pt2", "model_core_aten.pt2"}) {
      if (fs::exists(dir.path() / file)) paths.push_back((dir.path() / file).string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace kiln::test_data
