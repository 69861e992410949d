// kiln refit MODULE.kiln NEW.pt2 -o OUT.kiln [settings flags]: the compiled module with the new program's weights.

#include <iostream>
#include <memory>

#include "commands.h"
#include "kiln/compiler/refit.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/support/logging.h"
#include "output_paths.h"
#include "settings_options.h"

namespace kiln::cli {
namespace {

struct RefitCommandOptions {
  std::string module;
  std::string program;
  std::string output;
  std::shared_ptr<SettingsFlags> flags = std::make_shared<SettingsFlags>();
};

int run_refit(const RefitCommandOptions& o) {
  compiler::CompilationSettings settings;
  apply_settings_flags(settings, *o.flags);
  check_outputs({{"-o", o.output}, {"--timing-cache", settings.timing_cache_path, true}},
                {{"the module", o.module}, {"the program", o.program}});
  std::shared_ptr<runtime::CompiledModule> module = runtime::load(o.module);
  frontend::Program program = frontend::load_program(o.program);
  std::shared_ptr<runtime::CompiledModule> refitted;
  double ms = 0.0;
  {
    PhaseTimer timer("refit");
    refitted = compiler::refit_module_weights(*module, program, settings);
    ms = timer.elapsed_ms();
  }
  runtime::save(*refitted, o.output);
  std::cout << "refitted " << o.module << " with the weights of " << o.program << " -> " << o.output << ": "
            << refitted->engines().size() << " engines, " << static_cast<int64_t>(ms) << " ms\n";
  return kExitOk;
}

}  // namespace

Action setup_refit(CLI::App& app) {
  auto options = std::make_shared<RefitCommandOptions>();
  app.add_option("module", options->module, "The compiled .kiln module (built with --refittable or --cache-dir)")
      ->required();
  app.add_option("program", options->program, "The .pt2 program with the new weights (same architecture)")->required();
  app.add_option("-o,--output", options->output, "The .kiln archive to write")->required();
  add_settings_flags(app, options->flags);
  return [options]() { return run_refit(*options); };
}

}  // namespace kiln::cli
