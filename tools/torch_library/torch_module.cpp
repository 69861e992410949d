// torch.classes.kiln.CompiledModule: the registration and the methods Python calls.

#include "torch_module.h"

#include "torch_compile.h"

#include <cstring>

#include <ATen/ATen.h>
#include <torch/library.h>

#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"

namespace kiln::torch_library {

TorchModule::TorchModule(const std::string& path) : module_(runtime::load(path)) {}

TorchModule::TorchModule(std::shared_ptr<runtime::CompiledModule> module) : module_(std::move(module)) {}

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

bool TorchModule::static_shape_cuda_graphs() const { return module_->static_shape_cuda_graphs(); }

void TorchModule::set_static_shape_cuda_graphs(bool enabled) { module_->set_static_shape_cuda_graphs(enabled); }

std::string TorchModule::in_spec() const { return module_->call_spec().in_spec; }

std::string TorchModule::out_spec() const { return module_->call_spec().out_spec; }

void TorchModule::save(const std::string& path) const { runtime::save(*module_, path); }

at::Tensor TorchModule::to_bytes() const {
  std::vector<uint8_t> bytes = runtime::save_to_bytes(*module_);
  at::Tensor t = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

TORCH_LIBRARY(kiln, m) {
  m.class_<TorchModule>("CompiledModule")
      .def(torch::init<std::string>())
      .def("forward", &TorchModule::forward)
      .def("device", &TorchModule::device)
      .def("summary", &TorchModule::summary)
      .def("use_cuda_graphs", &TorchModule::use_cuda_graphs)
      .def("set_use_cuda_graphs", &TorchModule::set_use_cuda_graphs)
      .def("static_shape_cuda_graphs", &TorchModule::static_shape_cuda_graphs)
      .def("set_static_shape_cuda_graphs", &TorchModule::set_static_shape_cuda_graphs)
      .def("in_spec", &TorchModule::in_spec)
      .def("out_spec", &TorchModule::out_spec)
      .def("save", &TorchModule::save)
      .def("to_bytes", &TorchModule::to_bytes);
  // After the class: their schemas name it.
  m.def("compile", &compile_program);
  m.def("inspect", &inspect_program);
  m.def("load_module_bytes", &load_module_bytes);
}

}  // namespace kiln::torch_library
