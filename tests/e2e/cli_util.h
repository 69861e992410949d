#pragma once
// Running the kiln binary from tests as a user would: exit code, stdout and stderr of one invocation.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#ifndef KILN_CLI_PATH
#error "KILN_CLI_PATH must name the kiln binary"
#endif

namespace kiln::cli_test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Runs `kiln ARGS` through /bin/sh; `shell_prefix` goes before it (e.g. "ulimit -f 1; ").
inline Result kiln(const std::string& args, const std::string& shell_prefix = "") {
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() / ("kiln_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path out = dir / ("out" + std::to_string(counter) + ".txt");
  fs::path err = dir / ("err" + std::to_string(counter++) + ".txt");
  std::string command =
      shell_prefix + std::string(KILN_CLI_PATH) + " " + args + " >" + out.string() + " 2>" + err.string();
  int status = std::system(command.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline std::string data(const std::string& rel) { return std::string(KILN_TEST_DATA_DIR) + "/" + rel; }

inline size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace kiln::cli_test
