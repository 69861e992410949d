// The per-kind tables generated from the layer-kind list (KILN_LAYER_KINDS in kiln/engine/layers.h): kind
// names, shape inference and reference kernels, each entry the kind's own (engine/ops/<family>/<kind>.cpp).

#include <iterator>

#include "engine/ops/kind_ops.h"
#include "engine/ops/reference.h"

namespace kiln::engine {
namespace {

#define KILN_KIND_NAME(Kind, name) name,
constexpr const char* kKindNames[] = {KILN_LAYER_KINDS(KILN_KIND_NAME)};
#undef KILN_KIND_NAME

using InferFn = std::vector<ShapeOut> (*)(const Layer&, const std::vector<ShapeIn>&);
#define KILN_KIND_INFER(Kind, name) &ops::infer_kind<LayerKind::Kind>,
constexpr InferFn kInfer[] = {KILN_LAYER_KINDS(KILN_KIND_INFER)};
#undef KILN_KIND_INFER

using RunFn = void (*)(const Layer&, KernelArgs&);
#define KILN_KIND_RUN(Kind, name) &ops::run_kind<LayerKind::Kind>,
constexpr RunFn kRun[] = {KILN_LAYER_KINDS(KILN_KIND_RUN)};
#undef KILN_KIND_RUN

static_assert(std::size(kKindNames) == kNumLayerKinds && std::variant_size_v<LayerParams> == kNumLayerKinds);

}  // namespace

const char* layer_kind_name(LayerKind kind) {
  size_t i = static_cast<size_t>(kind);
  return i < std::size(kKindNames) ? kKindNames[i] : "?";
}

std::vector<ShapeOut> infer_shapes(const Layer& layer, const std::vector<ShapeIn>& in) {
  size_t i = static_cast<size_t>(layer.kind);
  KILN_CHECK(i < std::size(kInfer), Internal, "unknown layer kind");
  std::vector<ShapeOut> outs = kInfer[i](layer, in);
  KILN_CHECK(layer.format_copies >= 0 && (layer.format_copies == 0 || !outs.empty()), InvalidInput, "layer '",
             layer.name, "' has ", layer.format_copies, " format copies of an output it does not have");
  for (int c = 0; c < layer.format_copies; ++c) outs.push_back(outs[0]);  // (Layer::format_copies)
  return outs;
}

void ops::execute(const Layer& layer, KernelArgs& args) {
  size_t i = static_cast<size_t>(layer.kind);
  KILN_CHECK(i < std::size(kRun), Internal, "reference execution of an unknown layer kind");
  kRun[i](layer, args);
}

}  // namespace kiln::engine
