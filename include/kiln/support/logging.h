#pragma once
// Leveled logging to stderr. The level is process-wide (set by --verbose / --quiet or KILN_LOG_LEVEL).

#include <chrono>
#include <string>

#include "kiln/support/error.h"

namespace kiln {

enum class LogLevel { Debug = 0, Info = 1, Warning = 2, Error = 3, Off = 4 };

/// Sets the process-wide log level. Thread-safe.
void set_log_level(LogLevel level);
/// Returns the process-wide log level (initially from KILN_LOG_LEVEL=debug|info|warning|error|off, else Warning).
LogLevel log_level();
/// Returns whether messages at `level` are printed.
bool log_enabled(LogLevel level);
/// Prints one message at `level` (a no-op below the current level). Thread-safe, one line per call.
void log_message(LogLevel level, const std::string& message);

/// Logs "<phase>: <ms> ms" at Info when destroyed: wrap a compile phase in one of these.
class PhaseTimer {
 public:
  explicit PhaseTimer(std::string phase);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  /// Milliseconds since construction.
  double elapsed_ms() const;

 private:
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln

#define KILN_LOG(level, ...)                                                            \
  do {                                                                                  \
    if (::kiln::log_enabled(::kiln::LogLevel::level)) {                                 \
      ::kiln::log_message(::kiln::LogLevel::level, ::kiln::detail::concat(__VA_ARGS__)); \
    }                                                                                   \
  } while (0)
#define KILN_DEBUG(...) KILN_LOG(Debug, __VA_ARGS__)
#define KILN_INFO(...) KILN_LOG(Info, __VA_ARGS__)
#define KILN_WARN(...) KILN_LOG(Warning, __VA_ARGS__)
