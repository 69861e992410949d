#pragma once
// Layer kinds and their parameters: the vocabulary of engine::Network, shared by the builder, the plan format
// and every backend. This file is the one list of layer kinds: the LayerKind enum, the LayerParams variant,
// the kind names and the engine's per-kind tables (shape inference, reference kernels:
// src/engine/ops/kind_tables.cpp) are generated from KILN_LAYER_KINDS. Each kind's params live in
// kiln/engine/ops/<family>/<kind>.h, its shape inference and reference kernel in
// src/engine/ops/<family>/<kind>.cpp (docs/engine.md, "Adding a layer kind").

#include <cstdint>
#include <variant>

#include "kiln/engine/ops/params.h"
#include "kiln/engine/ops/tensor_format.h"

/// X(Kind, "name") for every layer kind: the enumerator LayerKind::Kind, its params struct KindParams, and
/// its stable name (used in plans, logs and timing-cache keys). The order is the plan format (a layer stores
/// its kind and its params alternative by index): new kinds go at the end. FusedPointwise and Reformat are
/// made only by the builder (a chain of pointwise layers; a change of activation memory format between
/// kernels that disagree).
#define KILN_LAYER_KINDS(X)            \
  X(Constant, "constant")              \
  X(Convolution, "convolution")        \
  X(MatrixMultiply, "matrix_multiply") \
  X(Elementwise, "elementwise")        \
  X(Activation, "activation")          \
  X(Unary, "unary")                    \
  X(Reduce, "reduce")                  \
  X(Softmax, "softmax")                \
  X(Normalization, "normalization")    \
  X(Shuffle, "shuffle")                \
  X(Concat, "concat")                  \
  X(Slice, "slice")                    \
  X(Gather, "gather")                  \
  X(Scatter, "scatter")                \
  X(Pooling, "pooling")                \
  X(Resize, "resize")                  \
  X(Select, "select")                  \
  X(Cast, "cast")                      \
  X(Shape, "shape")                    \
  X(Fill, "fill")                      \
  X(TopK, "topk")                      \
  X(Cumulative, "cumulative")          \
  X(Padding, "padding")                \
  X(Attention, "attention")            \
  X(NonZero, "nonzero")                \
  X(FusedPointwise, "fused_pointwise") \
  X(Reformat, "reformat")

namespace kiln::engine {

/// Every layer kind.
enum class LayerKind : uint8_t {
#define KILN_LAYER_KIND_ENUMERATOR(Kind, name) Kind,
  KILN_LAYER_KINDS(KILN_LAYER_KIND_ENUMERATOR)
#undef KILN_LAYER_KIND_ENUMERATOR
};
#define KILN_LAYER_KIND_ONE(Kind, name) +1
inline constexpr int kNumLayerKinds = 0 KILN_LAYER_KINDS(KILN_LAYER_KIND_ONE);
#undef KILN_LAYER_KIND_ONE
/// "convolution", "matrix_multiply", ... (stable: used in plans, logs and timing-cache keys).
const char* layer_kind_name(LayerKind kind);

}  // namespace kiln::engine

// Each kind's params (after LayerKind, which fused pointwise instructions name).
#include "kiln/engine/ops/attention/attention.h"
#include "kiln/engine/ops/linalg/convolution.h"
#include "kiln/engine/ops/linalg/matrix_multiply.h"
#include "kiln/engine/ops/movement/concat.h"
#include "kiln/engine/ops/movement/constant.h"
#include "kiln/engine/ops/movement/fill.h"
#include "kiln/engine/ops/movement/gather.h"
#include "kiln/engine/ops/movement/nonzero.h"
#include "kiln/engine/ops/movement/padding.h"
#include "kiln/engine/ops/movement/reformat.h"
#include "kiln/engine/ops/movement/scatter.h"
#include "kiln/engine/ops/movement/shape.h"
#include "kiln/engine/ops/movement/shuffle.h"
#include "kiln/engine/ops/movement/slice.h"
#include "kiln/engine/ops/pointwise/activation.h"
#include "kiln/engine/ops/pointwise/cast.h"
#include "kiln/engine/ops/pointwise/elementwise.h"
#include "kiln/engine/ops/pointwise/fused_pointwise.h"
#include "kiln/engine/ops/pointwise/select.h"
#include "kiln/engine/ops/pointwise/unary.h"
#include "kiln/engine/ops/reduction/cumulative.h"
#include "kiln/engine/ops/reduction/normalization.h"
#include "kiln/engine/ops/reduction/reduce.h"
#include "kiln/engine/ops/reduction/softmax.h"
#include "kiln/engine/ops/reduction/topk.h"
#include "kiln/engine/ops/spatial/pooling.h"
#include "kiln/engine/ops/spatial/resize.h"

namespace kiln::engine {

/// std::variant of the types after the first (the list macro writes ", KindParams" per kind, after a void).
template <typename First, typename... Ts>
struct VariantOfRest {
  using type = std::variant<Ts...>;
};

#define KILN_LAYER_KIND_PARAMS(Kind, name) , Kind##Params
/// The params of a layer: alternative i belongs to LayerKind i.
using LayerParams = VariantOfRest<void KILN_LAYER_KINDS(KILN_LAYER_KIND_PARAMS)>::type;
#undef KILN_LAYER_KIND_PARAMS

/// The LayerKind whose params `params` holds.
inline LayerKind params_kind(const LayerParams& params) { return static_cast<LayerKind>(params.index()); }

}  // namespace kiln::engine
