// kiln: the command line. Exit codes: 0 success, 1 a comparison failed, 2 an error (one line on stderr).

#include <exception>
#include <iostream>
#include <map>
#include <new>
#include <string_view>

#include "commands.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/support/printable.h"
#include "version_text.h"

namespace {

int fail(const std::string& message) {
  std::cerr << "kiln: error: " << kiln::printable(message) << std::endl;
  return kiln::cli::kExitError;
}

/// The first argument that is not an option: the subcommand (kiln's own options take no values), or "" when none.
std::string_view subcommand_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") return i + 1 < argc ? std::string_view(argv[i + 1]) : std::string_view();
    if (!a.empty() && a[0] != '-') return a;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kiln: an ahead-of-time inference compiler for PyTorch .pt2 programs"};
  app.name("kiln");
  app.require_subcommand(1);
  app.set_version_flag("--version", kiln::cli::version_text);
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More log output (-vv for debug)");
  app.add_flag("-q,--quiet", quiet, "Only errors");

  std::map<const CLI::App*, kiln::cli::Action> actions;
  for (const kiln::cli::Command& command : kiln::cli::commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    actions[sub] = command.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports an unknown subcommand as "A subcommand is required": name the word instead.
    const std::string_view word = subcommand_word(argc, argv);
    bool known = false;
    for (const kiln::cli::Command& command : kiln::cli::commands()) known = known || word == command.name;
    if (!word.empty() && !known) return fail("unknown subcommand '" + std::string(word) + "' (see kiln --help)");
    return fail(std::string(e.what()) + " (see kiln --help)");
  }

  if (quiet) {
    kiln::set_log_level(kiln::LogLevel::Error);
  } else if (verbose >= 2) {
    kiln::set_log_level(kiln::LogLevel::Debug);
  } else if (verbose == 1) {
    kiln::set_log_level(kiln::LogLevel::Info);
  }

  try {
    for (const auto& [sub, action] : actions) {
      if (sub->parsed()) return action();
    }
    return fail("no subcommand given (see kiln --help)");
  } catch (const kiln::Error& e) {
    return fail(e.what());
  } catch (const std::bad_alloc&) {
    return fail(kiln::Error(kiln::ErrorKind::Unsupported, "out of memory (an allocation failed)").what());
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown exception");
  }
}
