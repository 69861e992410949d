#include "kiln/lowering/pass_manager.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/lowering/decompositions.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::lowering {

const char* to_string(PassStage stage) {
  return stage == PassStage::PreLowering ? "pre_lowering" : "post_lowering";
}

PassManager PassManager::with_default_passes() {
  PassManager manager;
  for (const PassRegistration& entry : default_pass_table()) manager.register_pass(entry.make(), std::nullopt, entry.stage);
  return manager;
}

std::vector<std::shared_ptr<Pass>>& PassManager::list(PassStage stage) {
  return stage == PassStage::PreLowering ? pre_ : post_;
}

const std::vector<std::shared_ptr<Pass>>& PassManager::passes(PassStage stage) const {
  return stage == PassStage::PreLowering ? pre_ : post_;
}

void PassManager::register_pass(std::shared_ptr<Pass> pass, std::optional<size_t> index, PassStage stage) {
  KILN_CHECK(pass != nullptr, InvalidInput, "register_pass: null pass");
  auto& passes = list(stage);
  const std::string name = pass->name();
  for (const auto& existing : passes) {
    KILN_CHECK(existing->name() != name, InvalidInput, "register_pass: a pass named '", name,
               "' is already in the ", to_string(stage), " list");
  }
  const size_t at = index.value_or(passes.size());
  KILN_CHECK(at <= passes.size(), InvalidInput, "register_pass: index ", at, " past the end of the ",
             to_string(stage), " list (", passes.size(), " passes)");
  passes.insert(passes.begin() + static_cast<std::ptrdiff_t>(at), std::move(pass));
}

void PassManager::remove_pass(size_t index, PassStage stage) {
  auto& passes = list(stage);
  KILN_CHECK(index < passes.size(), InvalidInput, "remove_pass: index ", index, " out of range for the ",
             to_string(stage), " list (", passes.size(), " passes)");
  passes.erase(passes.begin() + static_cast<std::ptrdiff_t>(index));
}

namespace {

bool verify_always() {
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

bool run_list(const std::vector<std::shared_ptr<Pass>>& passes, PassStage stage, ir::Graph& graph,
              const PassContext& context) {
  bool any_change = false;
  const int rounds = std::max(context.max_iterations, 1);
  for (int round = 0; round < rounds; ++round) {
    bool changed = false;
    for (const auto& pass : passes) {
      bool pass_changed = false;
      try {
        pass_changed = pass->run(graph, context);
        if (pass_changed && (context.verify_each_pass || verify_always())) ir::verify(graph);
      } catch (const Error& e) {
        throw Error(e.kind(), "lowering pass '" + pass->name() + "': " + e.message(), e.context());
      }
      if (pass_changed && context.log_graph_after_pass) {
        KILN_DEBUG("graph after lowering pass ", pass->name(), ":\n", ir::print_graph(graph));
      }
      changed |= pass_changed;
    }
    any_change |= changed;
    if (!changed) return any_change;
  }
  KILN_WARN("lowering: the ", to_string(stage), " passes still changed the graph after ", rounds,
                " rounds; stopping");
  return any_change;
}

}  // namespace

bool PassManager::run(ir::Graph& graph, const PassContext& context) const {
  bool changed = run_list(pre_, PassStage::PreLowering, graph, context);
  changed |= run_list(post_, PassStage::PostLowering, graph, context);
  return changed;
}

std::string PassManager::describe() const {
  size_t width = 0;
  for (PassStage stage : {PassStage::PreLowering, PassStage::PostLowering}) {
    for (const auto& pass : passes(stage)) width = std::max(width, pass->name().size());
  }
  std::ostringstream out;
  for (PassStage stage : {PassStage::PreLowering, PassStage::PostLowering}) {
    out << to_string(stage)
        << (stage == PassStage::PreLowering ? " (canonicalizes both export forms" : " (decompositions, folding, cleanup")
        << "; the list repeats until no pass changes the graph):\n";
    const auto& passes = this->passes(stage);
    if (passes.empty()) out << "  (none)\n";
    for (size_t i = 0; i < passes.size(); ++i) {
      out << "  " << std::setw(2) << i << "  " << std::left << std::setw(static_cast<int>(width + 2))
          << passes[i]->name() << std::right << passes[i]->description() << "\n";
    }
  }
  return out.str();
}

PassManager& default_pass_manager() {
  static PassManager manager = PassManager::with_default_passes();
  return manager;
}

bool apply_lowering_passes(ir::Graph& graph, const PassContext& context) {
  return default_pass_manager().run(graph, context);
}

std::string describe_passes() {
  std::string text = default_pass_manager().describe();
  text += "decompositions (applied by 'decompose' to ops no converter takes):\n ";
  size_t column = 1;
  const auto& table = decompositions();
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string item = " " + table[i].name + (i + 1 < table.size() ? "," : "");
    if (column + item.size() > 100) {
      text += "\n ";
      column = 1;
    }
    text += item;
    column += item.size();
  }
  text += "\nkept whole (the engine has fused layers for them):\n ";
  column = 1;
  for (const std::string& op : keep_whole_ops()) {
    if (column + op.size() + 1 > 100) {
      text += "\n ";
      column = 1;
    }
    text += " " + op;
    column += op.size() + 1;
  }
  return text + "\n";
}

}  // namespace kiln::lowering
