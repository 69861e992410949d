#pragma once
// The kiln command line's subcommands. Each subcommand lives in its own file and is listed once in the table of
// commands.cpp; later subcommands (compile, bench, passes, converters, refit) slot in with one line there.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kiln::cli {

/// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitComparisonFailed = 1;
inline constexpr int kExitError = 2;

/// A subcommand's action: runs after parsing and returns the exit code. It may throw (kiln::Error or any
/// exception); main prints "kiln: error: ..." and exits with kExitError.
using Action = std::function<int()>;

struct Command {
  const char* name;
  const char* description;
  /// Declares the subcommand's options on `app` (bound to state the action captures) and returns the action.
  Action (*setup)(CLI::App& app);
};

/// The subcommand table.
const std::vector<Command>& commands();

// One per subcommand file.
Action setup_inspect(CLI::App& app);
Action setup_run(CLI::App& app);
Action setup_compile(CLI::App& app);
Action setup_bench(CLI::App& app);
Action setup_refit(CLI::App& app);
Action setup_passes(CLI::App& app);
Action setup_converters(CLI::App& app);
Action setup_cache(CLI::App& app);

}  // namespace kiln::cli
