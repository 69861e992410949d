#pragma once
// engine::Refitter: replaces named weights of a built plan without rebuilding (TensorRT's IRefitter).
// The builder records, for each named weight, where it ended up and which transform it went through
// (e.g. a cast to fp16, folding into a constant); refit re-runs that transform and re-creates the kernels
// using the weight (which re-does their own preparation, e.g. reorders to blocked layouts).
// Refitting is not thread-safe with respect to executing contexts: refit between executions.

#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/plan.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine {

class Refitter {
 public:
  /// A refitter for `plan` (which must have been built refittable, or with stripped weights).
  explicit Refitter(std::shared_ptr<Plan> plan);
  /// Stages new values for weight `name`; throws kiln::Error when the name is unknown or the dtype or
  /// shape differ from the original.
  void set_weights(const std::string& name, const HostTensor& value);
  /// Names the plan still needs (stripped and not yet set).
  std::vector<std::string> missing_weights() const;
  /// Applies all staged weights; returns the number of layers whose kernels were re-created.
  int refit();

 private:
  std::shared_ptr<Plan> plan_;
  std::vector<std::pair<std::string, HostTensor>> staged_;
};

}  // namespace kiln::engine
