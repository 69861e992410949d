// torch.classes.kiln.CompiledModule: the registration and the methods Python calls.

#include "torch_module.h"

#include <torch/library.h>

#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"

namespace kiln::torch_library {

TorchModule::TorchModule(const std::string& path) : module_(runtime::load(path)) {}

std::vector<at::Tensor> TorchModule::forward(const std::vector<at::Tensor>& inputs) const {
  std::vector<at::Tensor> all = module_->execute(inputs);
  std::vector<at::Tensor> user;
  for (size_t i : module_->user_output_indices()) user.push_back(std::move(all[i]));
  return user;
}

std::string TorchModule::device() const { return module_->device(); }

std::string TorchModule::summary() const {
  runtime::ModuleSummary s = module_->summary();
  return std::to_string(s.engine_segments) + " engines (" + std::to_string(s.engine_nodes) + " nodes), " +
         std::to_string(s.torch_runs) + " PyTorch runs (" + std::to_string(s.torch_nodes) + " nodes), backend " +
         module_->backend();
}

bool TorchModule::use_cuda_graphs() const { return module_->use_cuda_graphs(); }

void TorchModule::set_use_cuda_graphs(bool enabled) { module_->set_use_cuda_graphs(enabled); }

TORCH_LIBRARY(kiln, m) {
  m.class_<TorchModule>("CompiledModule")
      .def(torch::init<std::string>())
      .def("forward", &TorchModule::forward)
      .def("device", &TorchModule::device)
      .def("summary", &TorchModule::summary)
      .def("use_cuda_graphs", &TorchModule::use_cuda_graphs)
      .def("set_use_cuda_graphs", &TorchModule::set_use_cuda_graphs);
}

}  // namespace kiln::torch_library
