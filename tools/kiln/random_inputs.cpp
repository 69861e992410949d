#include "random_inputs.h"

#include <algorithm>
#include <map>
#include <random>

#include "kiln/compiler/compile.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"

namespace kiln::cli {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

std::vector<at::Tensor> random_inputs(const ir::Graph& graph, const std::vector<std::string>& shapes,
                                      uint64_t seed, std::vector<std::string>* used) {
  std::map<std::string, std::vector<int64_t>> given;
  for (const std::string& text : shapes) {
    compiler::InputSpec spec = compiler::parse_input_spec(text);
    KILN_CHECK(spec.min == spec.max, InvalidInput, "--shape '", text, "': one shape, not a range");
    const bool known = std::any_of(graph.inputs().begin(), graph.inputs().end(),
                                   [&](const ir::Value* v) { return v->name() == spec.name; });
    KILN_CHECK(known, InvalidInput, "--shape '", text, "': the program has no input '", spec.name, "'");
    given[spec.name] = spec.opt;
  }
  // Symbols the given shapes bind, then the export's hints for the rest.
  ir::SymBindings bindings;
  for (const ir::Value* v : graph.inputs()) {
    auto it = given.find(v->name());
    if (it == given.end()) continue;
    const std::vector<ir::SymExpr>& sizes = v->meta().sizes;
    KILN_CHECK(sizes.size() == it->second.size(), InvalidInput, "--shape ", v->name(), "=",
               dims_text(it->second), ": the input has ", sizes.size(), " dims (", v->meta().to_string(),
               ")");
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d].kind() == ir::SymExpr::Kind::Symbol)
        bindings.emplace(sizes[d].symbol_name(), it->second[d]);
    }
  }
  for (const ir::Value* v : graph.inputs()) {
    for (const ir::SymExpr& s : v->meta().sizes) {
      for (const std::string& symbol : s.free_symbols()) {
        if (bindings.count(symbol)) continue;
        auto hint = graph.symbol_hints().find(symbol);
        auto range = graph.symbol_ranges().find(symbol);
        bindings[symbol] = hint != graph.symbol_hints().end()     ? hint->second
                           : range != graph.symbol_ranges().end() ? std::max<int64_t>(1, range->second.min)
                                                                  : 1;
      }
    }
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<at::Tensor> out;
  for (const ir::Value* v : graph.inputs()) {
    KILN_CHECK(v->is_tensor(), Unsupported, "input '", v->name(),
               "' is not a tensor: give its value in an .npz (--inputs)");
    std::vector<int64_t> dims;
    for (const ir::SymExpr& s : v->meta().sizes) dims.push_back(s.evaluate(bindings));
    if (auto it = given.find(v->name()); it != given.end()) {
      KILN_CHECK(it->second == dims, InvalidInput, "--shape ", v->name(), "=", dims_text(it->second),
                 " does not fit the program's shape ", v->meta().to_string(),
                 " (with its other inputs: ", dims_text(dims), ")");
    }
    for (const auto& [symbol, value] : bindings) {
      auto range = graph.symbol_ranges().find(symbol);
      if (range == graph.symbol_ranges().end()) continue;
      KILN_CHECK(value >= range->second.min && value <= range->second.max, InvalidInput, "symbol ", symbol,
                 " = ", value, " is outside its range [", range->second.min, ", ", range->second.max,
                 "] (input '", v->name(), "')");
    }
    const DType dt = v->meta().dtype;
    HostTensor t(dt, dims);
    for (int64_t i = 0; i < t.numel(); ++i) {
      t.set_from_double(i, is_floating(dt) ? uniform(rng) : static_cast<double>(rng() & 1));
    }
    out.push_back(runtime::to_torch(t));
    if (used) used->push_back(v->name() + "=" + dims_text(dims));
  }
  return out;
}

}  // namespace kiln::cli
