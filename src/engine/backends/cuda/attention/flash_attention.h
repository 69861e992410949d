#pragma once
// The cuda tactics "flash", "flash_wide" and "flash_tall" for Attention layers, device side
// (flash_attention.cu): one fused FlashAttention-2 style kernel for fp16 and bf16 on tensor cores, in three
// CTA shapes (FlashShape). Like the launch headers (launch.h), this header is shared by nvcc and g++ and
// includes nothing of Kiln's engine headers.
//
// One CTA computes 16 or 32 query rows a warp of one (batch, head): Q is kept in registers, K/V tiles of
// kFlashKeys keys go through double-buffered shared memory (cp.async), S = Q K^T and O += P V run as mma.sync
// m16n8k16 with fp32 accumulation, and the softmax is online (running max and sum per row in fp32). With a
// causal mask, CTAs go out heaviest first and a warp skips the key tiles wholly after its rows. Head dims are
// padded with zeros to 32, 64 or 128 (one kernel per padded size).

#include "engine/backends/cuda/attention/attention_launch.h"
#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

/// The largest head dim (E of q/k and Ev of v) the flash kernel takes.
constexpr int64_t kFlashMaxHeadDim = 128;
/// Warps of a CTA of the kernel shapes, and keys per shared-memory tile.
constexpr int kFlashWarps = 4, kFlashWideWarps = 8, kFlashKeys = 64;
/// Query rows of the smallest CTA (what bounds the CTA count), and of the largest.
constexpr int kFlashRows = 16 * kFlashWarps, kFlashMaxRows = 16 * kFlashWideWarps;

/// The kernel's CTA shapes, one tactic each. None wins everywhere (bench/gpu/README.md, eighteenth and
/// twenty-second sessions), so the builder times them against each other: more rows a CTA share each K/V tile
/// in shared memory among more rows but make fewer CTAs (BERT-base at batch 1: 12 for 132 SMs).
enum class FlashShape : int {
  k4Warps = 0,      ///< "flash": 4 warps of 16 query rows
  k8Warps = 1,      ///< "flash_wide": 8 warps of 16 rows
  k4WarpsTall = 2,  ///< "flash_tall": 4 warps of 32 rows (two fragments: each K / V fragment read from shared
                    ///< memory feeds two MMAs); head dims up to 64
};

/// Whether the current device runs the flash kernel (compute capability >= 8.0: mma.sync bf16, cp.async,
/// ldmatrix); false with `why` set otherwise, also when no device is usable.
bool flash_attention_device_ok(const char** why);

/// Whether the kernel has the shape at head dim `head_dim` and the current device gives its CTA the shared
/// memory it needs (8 warps at 128 need 104 KB: more than sm_86 / sm_89 allow a block); `why` says why not.
bool flash_attention_fits_device(FlashShape shape, int64_t head_dim, const char** why);

/// Raises the dynamic shared-memory limit of the flash kernels of shape `shape` at head dim `head_dim` (the
/// larger of E and Ev) on the current device (at kernel creation: never while a graph records). Returns 0 or
/// the cudaError_t value of the first failure (cleared from the runtime's last error, so that no later launch
/// check reports it).
int prepare_flash_attention(FlashShape shape, int64_t head_dim);

/// softmax(q k^T * scale + mask) v, exactly the semantics of launch_attention (rows whose keys are all
/// masked give 0 x v, as torch's safe softmax), for dtype kF16 or kBF16, e and ev <= kFlashMaxHeadDim,
/// q/k/v/out rows addressed by p.rows (dense [batch, L, E] or strided views with contiguous rows). Uses
/// 16-byte loads and stores when e and ev are multiples of 8, the four buffers are 16-byte aligned and every
/// row offset and stride is a multiple of 8 elements, element loads otherwise. With `out8` set, the output is
/// written there as E4M3 codes (one byte per element, at the same element offsets p.rows[3] gives) instead of
/// into `out`.
void launch_flash_attention(const void* q, const void* k, const void* v, const void* mask, void* out,
                            int dtype, const AttnParams& p, Stream stream, E4m3Out out8 = {},
                            FlashShape shape = FlashShape::k4Warps);

}  // namespace kiln::engine::cuda
