#include "kiln/runtime/libtorch_node_executor.h"

#include <ATen/ATen.h>

#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"

namespace kiln::runtime {

std::vector<HostTensor> run_in_libtorch(const ir::Graph& graph, const std::vector<HostTensor>& inputs) {
  KILN_CHECK(inputs.size() == graph.inputs().size(), InvalidInput, "the graph takes ", graph.inputs().size(),
             " inputs, got ", inputs.size());
  std::vector<c10::IValue> torch_inputs;
  torch_inputs.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value* input = graph.inputs()[i];
    if (input->kind() == ir::ValueKind::SymInt) {
      KILN_CHECK(inputs[i].numel() == 1 && is_integral(inputs[i].dtype()), InvalidInput, "input '",
                 input->name(), "' is a SymInt: pass a one-element integer tensor, got ",
                 inputs[i].describe());
      torch_inputs.emplace_back(static_cast<int64_t>(inputs[i].get_as_double(0)));
    } else {
      torch_inputs.emplace_back(to_torch(inputs[i]));
    }
  }
  TorchExecutor executor(graph);
  std::vector<c10::IValue> results = executor.run(torch_inputs);
  std::vector<HostTensor> outputs;
  outputs.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const c10::IValue& r = results[i];
    if (r.isTensor()) {
      outputs.push_back(from_torch(r.toTensor()));
    } else if (r.isInt()) {
      outputs.push_back(HostTensor::from_int64s({r.toInt()}, {}));
    } else if (r.isDouble()) {
      HostTensor t(DType::Float64, {});
      t.set_from_double(0, r.toDouble());
      outputs.push_back(std::move(t));
    } else if (r.isBool()) {
      HostTensor t(DType::Bool, {});
      t.set_from_double(0, r.toBool() ? 1.0 : 0.0);
      outputs.push_back(std::move(t));
    } else {
      KILN_FAIL(Unsupported, "graph output ", i, " ('", graph.outputs()[i]->name(), "') is a ", r.tagKind(),
                ", which has no host tensor form");
    }
  }
  return outputs;
}

}  // namespace kiln::runtime
