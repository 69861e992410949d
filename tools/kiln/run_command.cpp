// kiln run MODEL.(pt2|kiln) [--reference] --inputs IO.npz [--outputs OUT.npz] [--compare REF.npz] [--atol A] [--rtol R]

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "compare.h"
#include "compiled_model.h"
#include "kiln/compiler/npz_inputs.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/libtorch_node_executor.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/support/npz.h"
#include "output_paths.h"
#include "program_info.h"

namespace kiln::cli {
namespace {

struct RunOptions {
  std::string model;
  bool reference = false;
  std::string inputs;
  std::string outputs;
  std::string compare;
  double atol = 1e-4;
  double rtol = 1e-4;
};

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

int compare_outputs(const ir::Graph& graph, const std::vector<size_t>& user_outputs,
                    const std::vector<HostTensor>& results, const RunOptions& o) {
  std::map<std::string, HostTensor> reference = read_npz(o.compare);
  if (user_outputs.empty()) {
    // A comparison of nothing proves nothing: the program returns only buffer mutations, a loss, ...
    std::cout << "comparison FAILED: the program has no user outputs to compare (its " << graph.outputs().size()
              << " outputs are buffer/input mutations or other non-user outputs)" << std::endl;
    return kExitComparisonFailed;
  }
  int failed = 0;
  for (size_t k = 0; k < user_outputs.size(); ++k) {
    const ir::Value* value = graph.outputs()[user_outputs[k]];
    const HostTensor& actual = results[user_outputs[k]];
    const HostTensor& expected =
        compiler::pick(reference, "output_" + std::to_string(k), value->name(), o.compare);
    Comparison c = compare_tensors(actual, expected, o.atol, o.rtol);
    std::cout << "output_" << k << " (" << value->name() << ") " << actual.describe() << ": ";
    if (!c.shape_match) {
      std::cout << "shape mismatch, reference is " << expected.describe() << "  FAIL\n";
    } else {
      std::string verdict = "ok";
      if (!c.passed) {
        verdict = "FAIL (" + std::to_string(c.mismatches) + " elements beyond tolerance";
        if (c.non_finite_mismatches > 0) {
          verdict += ", " + std::to_string(c.non_finite_mismatches) + " non-finite where the reference differs";
        }
        verdict += ")";
      }
      std::cout << "max_abs_err " << format_double(c.max_abs_error) << "  max_rel_err "
                << format_double(c.max_rel_error) << "  cosine "
                << (std::isnan(c.cosine) ? std::string("nan") : std::to_string(c.cosine)) << "  " << verdict << "\n";
    }
    if (!c.passed) ++failed;
  }
  if (failed > 0) {
    std::cout << "comparison FAILED: " << failed << " of " << user_outputs.size()
              << " outputs beyond tolerance (atol " << o.atol << ", rtol " << o.rtol << ")" << std::endl;
    return kExitComparisonFailed;
  }
  std::cout << "comparison passed: " << user_outputs.size() << " outputs within atol " << o.atol << ", rtol "
            << o.rtol << std::endl;
  return kExitOk;
}

// Writes, compares or lists the user outputs of a run.
int report_outputs(const ir::Graph& graph, const std::vector<size_t>& user_outputs,
                   const std::vector<HostTensor>& results, const RunOptions& o) {
  if (!o.outputs.empty()) {
    std::map<std::string, HostTensor> out;
    for (size_t k = 0; k < user_outputs.size(); ++k) out["output_" + std::to_string(k)] = results[user_outputs[k]];
    write_npz(o.outputs, out);
  }
  if (!o.compare.empty()) return compare_outputs(graph, user_outputs, results, o);
  for (size_t k = 0; k < user_outputs.size(); ++k) {
    std::cout << "output_" << k << " (" << graph.outputs()[user_outputs[k]]->name()
              << "): " << results[user_outputs[k]].describe() << "\n";
  }
  return kExitOk;
}

int run(const RunOptions& o) {
  check_outputs({{"--outputs", o.outputs}},
                {{"the model", o.model}, {"--inputs", o.inputs}, {"--compare", o.compare}});
  if (!o.reference) {
    // Compiled execution: a .kiln module, or a .pt2 compiled in memory with default settings.
    LoadedModel model = load_or_compile(o.model);
    std::vector<HostTensor> inputs = compiler::pick_inputs(model.module->graph().inputs(), o.inputs);
    std::vector<HostTensor> results;
    {
      PhaseTimer timer("compiled execution");
      results = model.module->execute_host(inputs);
    }
    return report_outputs(model.module->graph(), model.module->user_output_indices(), results, o);
  }
  KILN_CHECK(!runtime::is_module_archive(o.model), InvalidInput, "--reference runs a .pt2 program; '", o.model,
             "' is a compiled .kiln module");
  frontend::Program program = frontend::load_program(o.model);
  std::vector<HostTensor> inputs = compiler::pick_inputs(program.user_inputs(), o.inputs);
  std::vector<HostTensor> results;
  {
    PhaseTimer timer("reference execution");
    results = runtime::run_in_libtorch(*program.graph, inputs);
  }
  return report_outputs(*program.graph, user_output_indices(program), results, o);
}

}  // namespace

Action setup_run(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  app.add_option("model", options->model, "A .pt2 program (compiled in memory with default settings) or a .kiln module")
      ->required();
  app.add_flag("--reference", options->reference, "Execute the .pt2 node by node through libtorch instead");
  app.add_option("--inputs", options->inputs, "An .npz with input_K arrays (or arrays named like the inputs)")
      ->required();
  app.add_option("--outputs", options->outputs, "Write the outputs as output_K into this .npz");
  app.add_option("--compare", options->compare, "Compare with output_K arrays of this .npz (exit 1 when beyond "
                                                "tolerance)");
  app.add_option("--atol", options->atol, "Absolute tolerance (numpy allclose)")->capture_default_str();
  app.add_option("--rtol", options->rtol, "Relative tolerance (numpy allclose)")->capture_default_str();
  return [options]() { return run(*options); };
}

}  // namespace kiln::cli
