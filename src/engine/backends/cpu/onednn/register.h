#pragma once
// Registration of the CPU backend's oneDNN kernels (called from ../fast_kernels.cpp).

#include "engine/backends/cpu/kernel_registry.h"

namespace kiln::engine::cpu::onednn {

/// Rows "onednn", "onednn_winograd" and "onednn_blocked" for Convolution (and deconvolution, but Winograd).
void register_onednn_convolution(KernelTable& registry);
/// Row "onednn_int8" for Convolution (Tactic::int8: quantized with the tensors' dynamic ranges).
void register_onednn_int8_convolution(KernelTable& registry);
/// Row "onednn" for Reformat (fp32 reorders between Plain and the blocked formats).
void register_onednn_reformat(KernelTable& registry);
/// Row "onednn_1x1" for MatrixMultiply by a constant matrix: oneDNN's 1x1 convolution over A's rows.
void register_onednn_matmul_conv1x1(KernelTable& registry);
/// Row "onednn" for MatrixMultiply.
void register_onednn_matmul(KernelTable& registry);
/// Row "onednn_int8" for MatrixMultiply with a constant 2-D B (Tactic::int8).
void register_onednn_int8_matmul(KernelTable& registry);

}  // namespace kiln::engine::cpu::onednn
