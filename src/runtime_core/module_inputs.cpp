// The check of a module's inputs against its program's shapes and symbol ranges.

#include "runtime_core/module_inputs.h"

#include "kiln/support/error.h"

namespace kiln::runtime {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

void check_module_inputs(const ir::Graph& graph, const std::vector<InputFacts>& inputs, const std::string& device) {
  const auto& graph_inputs = graph.inputs();
  KILN_CHECK(inputs.size() == graph_inputs.size(), InvalidInput, "the module takes ", graph_inputs.size(),
             " inputs, got ", inputs.size());
  ir::SymBindings bindings;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& input = *graph_inputs[i];
    const InputFacts& t = inputs[i];
    KILN_CHECK(t.defined, InvalidInput, "input ", i, " ('", input.name(), "') is an undefined tensor");
    if (!input.is_tensor()) {
      KILN_CHECK(t.one_integer, InvalidInput, "input '", input.name(),
                 "' is a SymInt: pass a one-element integer tensor");
      continue;
    }
    KILN_CHECK(t.device.empty() || t.device == device, InvalidInput, "input '", input.name(), "' is on ", t.device,
               ", the module runs on ", device);
    const ir::TensorMeta& meta = input.meta();
    KILN_CHECK(t.dtype == meta.dtype, InvalidInput, "input '", input.name(), "' has dtype ", t.dtype_text,
               ", the module expects ", dtype_name(meta.dtype));
    const int64_t rank = static_cast<int64_t>(t.sizes.size());
    KILN_CHECK(rank == meta.rank(), InvalidInput, "input '", input.name(), "' has rank ", rank, " (shape ",
               dims_text(t.sizes), "), the module expects ", meta.to_string());
    for (int64_t d = 0; d < meta.rank(); ++d) {
      const int64_t got = t.sizes[static_cast<size_t>(d)];
      const ir::SymExpr& size = meta.sizes[static_cast<size_t>(d)];
      if (auto fixed = size.as_int()) {
        KILN_CHECK(got == *fixed, InvalidInput, "input '", input.name(), "' dim ", d, " is ", got, " (shape ",
                   dims_text(t.sizes), "), the module expects ", meta.to_string());
        continue;
      }
      if (size.kind() != ir::SymExpr::Kind::Symbol) continue;
      const std::string& symbol = size.symbol_name();
      auto [it, inserted] = bindings.emplace(symbol, got);
      KILN_CHECK(inserted || it->second == got, InvalidInput, "input '", input.name(), "' dim ", d, " is ", got,
                 " but ", symbol, " is already ", it->second, " from another input");
      auto range = graph.symbol_ranges().find(symbol);
      if (range == graph.symbol_ranges().end()) continue;
      const ir::SymRange& r = range->second;
      KILN_CHECK(got >= r.min && got <= r.max, InvalidInput, "input '", input.name(), "' dim ", d, " (", symbol,
                 ") is ", got, ", outside the compiled range [", r.min, ", ",
                 r.max == ir::SymRange::kUnbounded ? std::string("inf") : std::to_string(r.max), "]");
    }
  }
  // Dims given by expressions of symbols (e.g. 2*s0) must agree with the bound symbols.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& input = *graph_inputs[i];
    if (!input.is_tensor()) continue;
    for (int64_t d = 0; d < input.meta().rank(); ++d) {
      const ir::SymExpr& size = input.meta().sizes[static_cast<size_t>(d)];
      if (size.is_constant() || size.kind() == ir::SymExpr::Kind::Symbol) continue;
      bool bound = true;
      for (const std::string& s : size.free_symbols()) bound = bound && bindings.count(s) != 0;
      if (!bound) continue;
      const int64_t expected = size.evaluate(bindings);
      const int64_t got = inputs[i].sizes[static_cast<size_t>(d)];
      KILN_CHECK(got == expected, InvalidInput, "input '", input.name(), "' dim ", d, " is ", got,
                 ", the module expects ", size.to_string(), " = ", expected);
    }
  }
}

}  // namespace kiln::runtime
