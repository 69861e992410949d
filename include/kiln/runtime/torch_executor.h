#pragma once
// TorchExecutor: runs an ir::Graph (or the nodes Kiln leaves to PyTorch) through the libtorch dispatcher.
// Includes ATen: use only from runtime, compiler, tools and test oracles.

#include <memory>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/core/Tensor.h>

#include "kiln/ir/graph.h"

namespace kiln::runtime {

class TorchExecutor {
 public:
  /// Resolves every node's operator (by name and overload, with the mappings for ops this libtorch lacks) and
  /// converts the graph's constants to tensors once. Throws kiln::Error naming an unknown op.
  /// With `device`, everything runs there: constants are moved to it once and every device argument (the
  /// `device=` of factory ops and of `to`) names it instead of the device the program was exported on.
  explicit TorchExecutor(const ir::Graph& graph, c10::optional<c10::Device> device = c10::nullopt);
  ~TorchExecutor();
  TorchExecutor(TorchExecutor&&) noexcept;

  /// Runs the graph. `inputs` in graph input order. Thread-safe (no state is mutated by run).
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// HostTensor <-> at::Tensor (copies).
at::Tensor to_torch(const HostTensor& t);
HostTensor from_torch(const at::Tensor& t);

}  // namespace kiln::runtime
