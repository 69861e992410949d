#pragma once
// The sample-input check of a weakly typed reduced-precision build (BuilderConfig::sample_inputs): probe
// plans expose every layer's floating output as a binding; running a reduced and an fp32 probe on the same
// samples finds the layers whose output overflows (non-finite) only in the reduced type; the fp32 probe alone
// finds those whose output is too small for it (underflow to subnormals and zero). Build time only: the plan
// finally built has no probe bindings.

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

/// Runs the probe plan `reduced` on each sample and returns (layer name -> reason) for the layers whose output
/// is non-finite in `reduced` and finite in the fp32 probe `reference` (`high`: its values on the samples, as
/// run_probes returns them) while every input exposed in `reduced` is finite: the first layer along each path
/// that overflows, not its consumers.
std::map<std::string, std::string> find_overflowing_layers(
    const std::shared_ptr<const Plan>& reduced, const std::shared_ptr<const Plan>& reference,
    const std::vector<ProbeValues>& high, const std::vector<std::map<std::string, HostTensor>>& samples,
    DType reduced_dtype);

/// How much of `t` storing it in `to` loses: ||x - r(x)|| / ||x|| over the values whose rounding r (to
/// nearest even) stays finite (overflow is find_overflowing_layers' part); 0 for an all-zero tensor.
double storage_loss(const HostTensor& t, DType to);

/// From the fp32 probe plan `reference` and its values on the samples (`high`), (layer name -> reason) for the layers
/// whose output the reduced type cannot hold (storage_loss above kUnderflowLossRoundoffs unit roundoffs of
/// `to`: values below fp16's normal range), and for the layers that read such an output (cast down for them,
/// it would be lost at their input). Their fp32 values decide, so a chain of small values is found in one
/// run.
std::map<std::string, std::string> find_underflowing_layers(const std::shared_ptr<const Plan>& reference,
                                                            const std::vector<ProbeValues>& high,
                                                            DType reduced_dtype);

/// `plan` run on each sample (run_probe).
std::vector<ProbeValues> run_probes(const std::shared_ptr<const Plan>& plan,
                                    const std::vector<std::map<std::string, HostTensor>>& samples);

/// The worst cosine similarity, over the samples and the floating bindings named in `outputs`, of `low`'s values
/// against `high`'s (per sample, as run_probes returns them): NaN where a value of `low` is not finite, 1 where
/// both are all zero, 0 where only one is.
double output_cosine(const std::vector<ProbeValues>& low, const std::vector<ProbeValues>& high,
                     const std::vector<std::string>& outputs);

/// The layers of `plan` a precision applies to (not constants, host layers or reformats), in execution order.
std::vector<std::string> precision_layers(const Plan& plan);

/// A tensor held in the reduced type loses at most one unit roundoff (2^-11 for fp16, 2^-8 for bf16) of its
/// norm while its values are in the type's normal range (each value at most that much of itself); losing
/// twice that means subnormals or zeros hold a good part of it.
constexpr double kUnderflowLossRoundoffs = 2.0;

}  // namespace kiln::engine::passes
