// kiln: the command line. Exit codes: 0 success, 1 a comparison failed, 2 an error (one line on stderr).

#include <exception>
#include <iostream>
#include <map>

#include "commands.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace {

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

int fail(const std::string& message) {
  std::cerr << "kiln: error: " << one_line(message) << std::endl;
  return kiln::cli::kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kiln: an ahead-of-time inference compiler for PyTorch .pt2 programs"};
  app.name("kiln");
  app.require_subcommand(1);
  app.set_version_flag("--version", "kiln 0.1.0");
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
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown exception");
  }
}
