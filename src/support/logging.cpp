#include "kiln/support/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "kiln/support/printable.h"

namespace kiln {
namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("KILN_LOG_LEVEL");
  if (env == nullptr) return LogLevel::Warning;
  std::string_view v(env);
  if (v == "debug") return LogLevel::Debug;
  if (v == "info") return LogLevel::Info;
  if (v == "error") return LogLevel::Error;
  if (v == "off") return LogLevel::Off;
  return LogLevel::Warning;
}

/// KILN_LOG_TIME=1: every line starts with the seconds since the process's first log line (where a compile
/// spends its time, from the gaps between lines).
bool timestamps_from_env() {
  const char* env = std::getenv("KILN_LOG_TIME");
  return env != nullptr && *env != '\0' && std::string_view(env) != "0";
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(level_from_env())};
  return level;
}

const char* prefix(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "kiln [debug] ";
    case LogLevel::Info: return "kiln [info] ";
    case LogLevel::Warning: return "kiln [warning] ";
    case LogLevel::Error: return "kiln [error] ";
    case LogLevel::Off: return "";
  }
  return "";
}

}  // namespace

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(level_storage().load()); }
bool log_enabled(LogLevel level) { return level != LogLevel::Off && static_cast<int>(level) >= level_storage().load(); }

void log_message(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  static std::mutex mutex;
  static const bool timestamps = timestamps_from_env();
  static const auto start = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex);
  if (timestamps) {
    std::fprintf(stderr, "[%9.3f s] ",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::fprintf(stderr, "%s%s\n", prefix(level), printable(message, false).c_str());
}

PhaseTimer::PhaseTimer(std::string phase) : phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}

double PhaseTimer::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

PhaseTimer::~PhaseTimer() {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f ms", elapsed_ms());
  KILN_INFO(phase_, ": ", buf);
}

}  // namespace kiln
