#pragma once
// The compiler from Python: ops registered by libkiln_torch.so next to torch.classes.kiln.CompiledModule,
// which the Python package `kiln` calls (python/kiln/_compile.py, docs/python.md):
//
//   torch.ops.kiln.compile(pt2_path, options_json, samples) -> (CompiledModule, report_json)
//   torch.ops.kiln.inspect(pt2_path, options_json) -> info_json
//   torch.ops.kiln.load_module_bytes(uint8 tensor) -> CompiledModule
//
// options_json: {"settings": {name: value, ...} (settings_from_json, kiln/settings/settings_json.h: over the
// defaults), "inputs": [null or {"name" (optional: the program's input at that position), "min", "opt",
// "max": [dims], "dtype" (optional, checked)} per user input in order, or fewer]}. Errors are kiln::Error,
// which torch raises in Python as RuntimeError with Kiln's message.

#include <string>
#include <tuple>

#include <ATen/core/Tensor.h>
#include <torch/custom_class.h>

#include "torch_module.h"

namespace kiln::torch_library {

/// Compiles the .pt2 program at `path`; returns the module and the compile report as JSON: {"phases": [[name,
/// ms]], "engines": [{"segment", "nodes", "network_layers", "plan_layers", "plan_bytes", "build_ms",
/// "cache_hit"}], "fallbacks": [...], "engine_nodes", "torch_nodes", "text"}. `samples`: one tensor per
/// program input (kiln.compile's example tensors), the sample inputs of an fp16/bf16 build's overflow check
/// (compiler:: compile); empty, or another count than the program's inputs: none.
std::tuple<c10::intrusive_ptr<TorchModule>, std::string> compile_program(const std::string& path,
                                                                         const std::string& options,
                                                                         std::vector<at::Tensor> samples);

/// `kiln inspect --coverage --json` of the .pt2 program at `path` under the options' settings: the program
/// summary (tools/kiln/program_info.h) of the lowered graph with "coverage" (partitioning/coverage.h).
std::string inspect_program(const std::string& path, const std::string& options);

/// A module from the bytes TorchModule::to_bytes gave (1-d uint8, on the CPU).
c10::intrusive_ptr<TorchModule> load_module_bytes(const at::Tensor& bytes);

}  // namespace kiln::torch_library
