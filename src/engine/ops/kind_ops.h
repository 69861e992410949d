#pragma once
// What every layer kind defines once, in its own file engine/ops/<family>/<kind>.cpp: its shape inference and
// its reference kernel. Declared here for every kind of the list in kiln/engine/layers.h; the dispatch tables
// (kind_tables.cpp) are generated from the same list.

#include <vector>

#include "engine/ops/shape_inference.h"
#include "kiln/engine/backend.h"
#include "kiln/support/error.h"

namespace kiln::engine::ops {

/// Validates a layer of kind K against its inputs and returns its outputs (infer_shapes' contract).
template <LayerKind K>
std::vector<ShapeOut> infer_kind(const Layer& layer, const std::vector<ShapeIn>& in);
/// Runs a layer of kind K on host buffers: plain loops, every dtype, exact semantics (execute's contract).
template <LayerKind K>
void run_kind(const Layer& layer, KernelArgs& args);

#define KILN_DECLARE_KIND_OPS(Kind, name)                                                                \
  template <>                                                                                            \
  std::vector<ShapeOut> infer_kind<LayerKind::Kind>(const Layer& layer, const std::vector<ShapeIn>& in); \
  template <>                                                                                            \
  void run_kind<LayerKind::Kind>(const Layer& layer, KernelArgs& args);
KILN_LAYER_KINDS(KILN_DECLARE_KIND_OPS)
#undef KILN_DECLARE_KIND_OPS

}  // namespace kiln::engine::ops
