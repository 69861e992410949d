#pragma once
// Launch function of the generic pointwise interpreter (pointwise.cu) and its program, shared by nvcc and g++
// (launch.h says how).

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

// ---- Pointwise (pointwise.cu): a generic interpreter of small programs, one thread per output element. ----
// The real design compiles each chain with NVRTC at build time; this generic kernel is the first version.

enum PwKind : uint8_t { kPwElementwise, kPwActivation, kPwUnary, kPwCopy, kPwSelect, kPwScaleAdd };
constexpr int kMaxPwSources = 8, kMaxPwInstrs = 32, kPwTemp = 64;

/// A source (layer input or weight) read with per-dim element strides aligned to the output shape
/// (stride 0 on broadcast dims).
struct PwSource {
  const void* data = nullptr;
  int dtype = kF32;
  int64_t st[kMaxRank] = {};
};

/// One instruction; operands a, b, c name a source (< kPwTemp) or the result of instruction (x - kPwTemp).
/// Elementwise: op = ElementwiseOp; Activation: op = ActivationKind with alpha/beta; Unary: op = UnaryOp;
/// Copy: the value of a; Select: a != 0 ? b : c; ScaleAdd: a + alpha * b.
struct PwInstr {
  uint8_t kind = kPwCopy, op = 0;
  int16_t a = 0, b = 0, c = 0;
  float alpha = 0, beta = 0;
};

struct PwProgram {
  int n_sources = 0;
  PwSource src[kMaxPwSources];
  int n_instr = 0;
  PwInstr instr[kMaxPwInstrs];
  bool integral = false;  // elementwise ops use integer semantics (Div truncates, ...)
};

/// out[i] = program(sources at i) over `out_shape`, stored as `out_dtype`. Computes in double when
/// `use_double` (integer programs), else in float.
void launch_pointwise(const PwProgram& program, const Shape& out_shape, void* out, int out_dtype,
                      bool use_double, Stream stream);

}  // namespace kiln::engine::cuda
