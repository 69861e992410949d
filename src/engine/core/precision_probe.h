#pragma once
// The sample-input check of a weakly typed reduced-precision build (BuilderConfig::sample_inputs): probe
// plans expose every layer's floating output as a binding; running a reduced and an fp32 probe on the same
// samples finds the layers whose output overflows (non-finite) only in the reduced type. Build time only: the
// plan finally built has no probe bindings.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/plan_impl.h"

#include "kiln/engine/builder.h"

namespace kiln::engine::passes {

using ProbeValues = std::map<std::string, HostTensor>;

/// A quick build of `network` (first tactic, no timing cache, weights kept) whose every kernel layer's fp32
/// output is a binding (expose_layer_outputs), in the precisions of `config`. Defined with the builder
/// (builder.cpp).
std::shared_ptr<const Plan> build_probe_plan(const BuilderConfig& config, const Network& network);

/// Every binding's value (inputs included) after one run of `plan` on `sample` (input name -> value,
/// converted to the binding's dtype where it differs). Throws kiln::Error(InvalidInput) when an input is
/// missing.
ProbeValues run_probe(const std::shared_ptr<const Plan>& plan, const ProbeValues& sample);

/// Makes every fp32 output of a kernel layer (not a constant, not data-dependent) a plan output, so a run
/// shows it. Run after the fusions, before lower_precision: the layers are those the real build has.
void expose_layer_outputs(Plan::Impl& g);

/// Runs the probe plans `reduced` and `reference` (fp32) on each sample and returns (layer name -> reason)
/// for the layers whose output is non-finite in `reduced` and finite in `reference` while every input exposed
/// in `reduced` is finite: the first layer along each path that overflows, not its consumers.
std::map<std::string, std::string> find_overflowing_layers(
    const std::shared_ptr<const Plan>& reduced, const std::shared_ptr<const Plan>& reference,
    const std::vector<std::map<std::string, HostTensor>>& samples, DType reduced_dtype);

}  // namespace kiln::engine::passes
