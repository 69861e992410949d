#pragma once
// The CPU backend's kernel table (rows of engine/core/kernel_table.h, whose comment is the contract).
//
// For each layer the CPU backend offers, as tactics, every row of that kind that applies, the last registered
// first (TacticOrder::LastRegisteredFirst): the fast kernels before the reference row "ref", which is always
// a candidate. CPU kernels besides the shared rules:
//   - parallelize with args.pool->parallel_for;
//   - a row with a `formats` function takes any format it is created with (KernelRow::any_format) and
//     throws kiln::Error on one it cannot handle;
//   - Fused layers: Convolution/MatrixMultiply carry post_ops (activation, or Sum of the next extra input)
//     and an optional bias weight; FusedPointwise carries a small program (layers.h). With one Sum, the
//     output may be the residual's own buffer (the memory plan does that when the residual dies there):
//     read each residual element before writing that output element, and skip copying when they coincide.
//
// Rows come from two functions: register_reference_kernels (this backend's own, reference_kernels.cpp)
// and register_fast_kernels (src/engine/backends/cpu/fast_kernels.cpp, owned by the fast-kernel
// author: oneDNN convolution/matmul with post-ops, vectorized pointwise/softmax/normalization, ...).

#include "engine/core/kernel_table.h"

namespace kiln::engine::cpu {

/// The reference kernels: one "ref" row for every layer kind (plain loops, every dtype).
void register_reference_kernels(KernelTable& table);
/// The fast kernels (defined in fast_kernels.cpp).
void register_fast_kernels(KernelTable& table);
/// The process-wide CPU kernel table (built once, on first use).
const KernelTable& cpu_kernels();

}  // namespace kiln::engine::cpu
