// Log lines (kiln/support/logging.h): KILN_LOG_TIME=1 starts every line with the seconds since the process's
// first log line ("[    0.000 s] kiln [info] ..."); unset or 0, lines start with the level's prefix. The
// switch is read once per process, so each setting runs in a child process of its own (this binary again,
// filtered to LogLines.Child), its stderr in a file.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/support/logging.h"

extern char** environ;

namespace kiln {
namespace {

constexpr const char* kChildVariable = "KILN_TEST_LOG_LINES_CHILD";

// The stderr lines of this binary run as LogLines.Child with KILN_LOG_TIME set to `log_time` (unset when
// null).
std::vector<std::string> child_log_lines(const char* log_time) {
  std::vector<std::string> env{std::string(kChildVariable) + "=1"};
  if (log_time != nullptr) env.push_back(std::string("KILN_LOG_TIME=") + log_time);
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    if (!var.starts_with("KILN_LOG_TIME=") && !var.starts_with("KILN_LOG_LEVEL=")) env.push_back(var);
  }
  std::vector<char*> envp;
  for (std::string& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  const std::string err = ::testing::TempDir() + "/kiln_log_lines_" + std::to_string(::getpid()) + ".txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string exe = "/proc/self/exe", filter = "--gtest_filter=LogLines.Child";
  char* argv[] = {exe.data(), filter.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(spawned, 0);
  if (spawned != 0) return {};
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child process failed";
  std::vector<std::string> lines;
  std::ifstream in(err);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::remove(err.c_str());
  return lines;
}

// What the parent tests read: an info and a warning line, and a debug message below the level (no line).
TEST(LogLines, Child) {
  if (std::getenv(kChildVariable) == nullptr) GTEST_SKIP() << "runs in the child process of LogLines tests";
  set_log_level(LogLevel::Info);
  KILN_INFO("first ", 1);
  KILN_DEBUG("not printed");
  KILN_WARN("second");
}

TEST(LogLines, LogTimePrefixesEveryLineWithSeconds) {
  const std::vector<std::string> lines = child_log_lines("1");
  ASSERT_EQ(lines.size(), 2u);
  // "[%9.3f s] ": seconds since the first log line, three decimals, right-aligned in 9 columns.
  const std::regex stamped(R"(^\[ *([0-9]+\.[0-9]{3}) s\] kiln \[(info|warning)\] (.*)$)");
  std::smatch first, second;
  ASSERT_TRUE(std::regex_match(lines[0], first, stamped)) << lines[0];
  ASSERT_TRUE(std::regex_match(lines[1], second, stamped)) << lines[1];
  EXPECT_EQ(lines[0].find("] kiln"), 12u) << lines[0];  // "[", 9 columns, " s", then "]"
  EXPECT_EQ(first[2], "info");
  EXPECT_EQ(first[3], "first 1");
  EXPECT_EQ(second[2], "warning");
  EXPECT_EQ(second[3], "second");
  // The clock starts at the first line and is monotonic.
  EXPECT_LE(std::stod(first[1]), std::stod(second[1]));
}

TEST(LogLines, WithoutLogTimeLinesStartWithTheLevel) {
  for (const char* setting : {static_cast<const char*>(nullptr), "0", ""}) {
    SCOPED_TRACE(setting == nullptr ? "unset" : std::string("KILN_LOG_TIME=") + setting);
    EXPECT_EQ(child_log_lines(setting),
              (std::vector<std::string>{"kiln [info] first 1", "kiln [warning] second"}));
  }
}

}  // namespace
}  // namespace kiln
