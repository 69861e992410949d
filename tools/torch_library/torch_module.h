#pragma once
// Kiln from Python: a TorchScript custom class over runtime::CompiledModule, registered by libkiln_torch.so
// as torch.classes.kiln.CompiledModule (as Torch-TensorRT registers its engine class). The Python package
// `kiln` (python/kiln, docs/python.md) wraps it in an nn.Module; used directly:
//
//   torch.classes.load_library("build/tools/torch_library/libkiln_torch.so")
//   module = torch.classes.kiln.CompiledModule("model.kiln")
//   outputs = module.forward([x])          # list of tensors, the program's user outputs
//   module.set_use_cuda_graphs(True)        # replay CUDA graphs per input shape (cuda modules), for every engine
//
// Tensors pass without copies: a cuda module takes and returns CUDA tensors and runs on PyTorch's current
// stream, so CUDA events and torch.cuda.synchronize() time it as they time PyTorch.

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/custom_class.h>

#include "kiln/runtime/compiled_module.h"

namespace kiln::torch_library {

class TorchModule : public torch::CustomClassHolder {
 public:
  /// Loads a .kiln archive. Throws kiln::Error naming the file on anything malformed.
  explicit TorchModule(const std::string& path);
  explicit TorchModule(std::shared_ptr<runtime::CompiledModule> module);
  /// Runs the module; returns its user outputs (the outputs the exported program returns to its caller).
  std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) const;
  /// "cpu" or "cuda:N".
  std::string device() const;
  /// One line: engines, PyTorch runs and node counts.
  std::string summary() const;
  /// Whether engines replay CUDA graphs (the module's use_cuda_graphs setting; ignored on cpu). Switching it
  /// drops recorded graphs; call it between forwards, not during one.
  bool use_cuda_graphs() const;
  void set_use_cuda_graphs(bool enabled);
  /// Whether static-shape engines replay CUDA graphs without use_cuda_graphs (default true; same rules).
  bool static_shape_cuda_graphs() const;
  void set_static_shape_cuda_graphs(bool enabled);
  /// The program's serialized pytree specs of (args, kwargs) and of the result ("" when unknown).
  std::string in_spec() const;
  std::string out_spec() const;
  /// Writes the module as a .kiln archive (atomically: a failed save leaves no file).
  void save(const std::string& path) const;
  /// The .kiln archive's bytes as a 1-d uint8 tensor (for pickling); load_module_bytes reads them back.
  at::Tensor to_bytes() const;

 private:
  std::shared_ptr<runtime::CompiledModule> module_;
};

}  // namespace kiln::torch_library
