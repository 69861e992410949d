#pragma once
// Builders of FusedPointwise programs for tests: one instruction of each kind, and the layer holding them.

#include <utility>
#include <vector>

#include "kiln/engine/layers.h"

namespace kiln::engine::testing::programs {

constexpr int64_t kIn = PointwiseInstr::kInput, kW = PointwiseInstr::kWeight, kT = PointwiseInstr::kTemp;

inline PointwiseInstr instr(LayerKind kind, int64_t op, std::vector<int64_t> operands) {
  PointwiseInstr in;
  in.kind = kind;
  in.op = op;
  in.operands = std::move(operands);
  return in;
}
inline PointwiseInstr ew(ElementwiseOp op, int64_t a, int64_t b) {
  return instr(LayerKind::Elementwise, static_cast<int64_t>(op), {a, b});
}
inline PointwiseInstr un(UnaryOp op, int64_t a) {
  return instr(LayerKind::Unary, static_cast<int64_t>(op), {a});
}
inline PointwiseInstr select(int64_t c, int64_t a, int64_t b) {
  return instr(LayerKind::Select, 0, {c, a, b});
}
inline PointwiseInstr cast(DType to, int64_t a) {
  return instr(LayerKind::Cast, static_cast<int64_t>(to), {a});
}

/// A FusedPointwise layer named "fused" running `program` with `weights`.
inline Layer fused(std::vector<PointwiseInstr> program, std::vector<Weights> weights = {}) {
  Layer l;
  l.name = "fused";
  l.kind = LayerKind::FusedPointwise;
  l.params = FusedPointwiseParams{std::move(program)};
  l.weights = std::move(weights);
  return l;
}

}  // namespace kiln::engine::testing::programs
