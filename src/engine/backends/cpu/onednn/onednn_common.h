#pragma once
// Helpers shared by the CPU backend's oneDNN kernels: the process-wide oneDNN engine, mapping of Kiln
// post-ops onto oneDNN attributes, thread count control and small dims utilities.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "engine/core/kernel_table.h"
#include "kiln/engine/backend.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {

using DT = dnnl::memory::data_type;

/// The CPU oneDNN engine (created once, shared by every kernel).
const dnnl::engine& cpu_engine();

/// Converts Kiln dims to oneDNN dims.
dnnl::memory::dims to_dnnl_dims(const Dims& dims);

/// Row-major strides of `dims` as oneDNN dims.
dnnl::memory::dims dense_strides(const dnnl::memory::dims& dims);

/// The oneDNN descriptor of an activation of `dims` stored in `format` (which must apply to its rank).
dnnl::memory::desc activation_md(const Dims& dims, DT dtype, TensorFormat format);

/// The TensorFormat that `md` (an activation of `dims` chosen by a primitive) is, or Plain when it is none of
/// them.
TensorFormat format_of(const dnnl::memory::desc& md, const Dims& dims);

/// Whether every activation in `post_ops` maps onto a oneDNN eltwise post-op and the Sum post-ops are
/// usable (at most one); `why` says what is not.
bool post_ops_supported(const std::vector<PostOp>& post_ops, std::string* why = nullptr);

/// Whether a matrix multiply's `post_ops` run in oneDNN (post_ops_supported) with the residual of a Sum of the
/// output's dtype and dims (min, opt and max: oneDNN's sum post-op adds into the destination); `why` says why not.
bool matmul_post_ops_fit(const LayerInfo& info, const std::vector<PostOp>& post_ops, std::string* why);

/// Whether two tensors have the same dims at every point of the profile (min, opt and max).
inline bool same_dims(const TensorInfo& a, const TensorInfo& b) {
  return a.min == b.min && a.opt == b.opt && a.max == b.max;
}

/// The oneDNN primitive attributes for `post_ops` (which must be supported). A Sum post-op becomes oneDNN's
/// sum post-op: the destination must hold the residual before the primitive runs. An INT8 kernel multiplies
/// the sum's scale by `sum_factor` (the residual's quantization step over the output's) and names the
/// residual's type `sum_dtype` when it differs from the destination's (undef: the destination's).
dnnl::primitive_attr make_attr(const std::vector<PostOp>& post_ops, float sum_factor = 1.0f,
                               DT sum_dtype = DT::undef);

/// Whether oneDNN's f32 sgemm runs in this process (probed once, by running a 2x2 product). It does not where
/// another oneDNN shares the process and exports the same symbols: pip's torch links one into
/// libtorch_cpu.so, and both it and Debian's libdnnl.so.2 export the std::call_once helper that runs the
/// one-time generation of the sgemm kernels (gemm_info_t<float, float, float>::jit_init's lambda; a weak
/// symbol of default visibility). The dynamic linker binds libdnnl's call to the copy loaded first,
/// libtorch_cpu's, which fills that library's kernel tables instead; libdnnl's stay empty for the life of the
/// process and every primitive built on sgemm ("gemm:jit" convolutions, inner products and matmuls) fails at
/// execution with status unimplemented ("could not execute a primitive"), at every shape and thread count.
bool sgemm_runs();

/// Whether oneDNN implementation `impl` (impl_info_str()) computes with oneDNN's sgemm ("x64:gemm:jit",
/// "gemm:jit"; not brgemm's "brg..." kernels, which have their own JIT code).
bool built_on_sgemm(const std::string& impl);

/// Whether this CPU multiplies every INT8 pair exactly in oneDNN's optimized kernels: with VNNI (AVX-512
/// VNNI, AVX-VNNI, AMX) products of u8 x s8 pairs accumulate in 32 bits. Without it (plain AVX2 / AVX-512)
/// oneDNN's kernels add each pair's two products in a saturating 16-bit register (vpmaddubsw): full-range
/// weights then give wrong sums (9 dB SQNR on the Q/DQ resnet fixture on an AVX2 EPYC), and oneDNN halves the
/// weights of a layer whose input is s8 (its s8s8 compensation). The backend registry asks this before
/// folding a program's quantize/dequantize pairs (a program's weights are full 8-bit); `why` says why not.
bool int8_products_exact(std::string* why);

/// The largest |q| of the weights Kiln quantizes itself for oneDNN's INT8 kernels on this CPU: 127 with VNNI;
/// 63 without, where a pair of u8 x s8 products sums to at most 255 x 63 x 2 = 32130, inside the 16-bit
/// register (one bit of weight precision given up for INT8 arithmetic that stays exact).
int32_t int8_weight_max();

/// Whether an INT8 convolution or matmul reading an input of INT8 type `input` (UInt8 or Int8) with weights
/// quantized by Kiln (`program_scales` false) or given by the program (true) computes exactly on this CPU:
/// with VNNI always; without, only a u8 input with Kiln's weights (int8_weight_max). `why` says why not.
bool int8_layer_exact(DType input, bool program_scales, std::string* why);

/// The zero point an INT8 convolution or matrix multiply stores a signed fp32 input with when it quantizes it
/// itself: 0 with VNNI (s8 as it is); 128 without, where the input is stored as u8 (its s8 value + 128) and
/// oneDNN's src zero point subtracts 128 x the weights' sums in 32 bits (a convolution's padding counted as the
/// zero point, i.e. as 0), so the pairs it adds in 16 bits are u8 x 7-bit products: exact, as for a u8 input.
/// An s8 tensor another INT8 layer wrote is read as it is: without VNNI the builder keeps such a tensor floating
/// and its reader quantizes it.
int32_t signed_input_zero_point();

/// Whether oneDNN implementation `impl` (impl_info_str()) adds the INT8 products of weights quantized to
/// `weight_max` (int8_weight_max) exactly: always for 7-bit weights (63); for 8-bit ones (127, on a VNNI CPU)
/// unless the implementation names an instruction set without VNNI (oneDNN 2.6: "jit_uni_int8:avx2",
/// "jit_uni_int8_1x1:sse41", ...): oneDNN lists implementations per configuration, and one JIT-compiled for
/// such an ISA adds pairs in 16 bits whatever the machine has (on an AVX-512 VNNI CPU without AVX-VNNI, the
/// avx2 and sse41 ones). Names with "vnni" or "amx" (or an avx512_core_bf16/fp16 ISA, which include VNNI), and
/// names without an ISA ("x64:gemm_s8u8s32:jit" and the other gemm-based ones dispatch to the machine's best;
/// the reference loops add in 32 bits) are exact. `why` says why not.
bool int8_impl_exact(const std::string& impl, int32_t weight_max, std::string* why);
/// Moves `pd` past the implementations int8_impl_exact refuses at int8_weight_max() (oneDNN lists exact ones
/// after them, e.g. the gemm-based convolution); fails with Unsupported, naming `what`, when none is left:
/// where a kernel is made, the tactic then gives way to another, and at a later shape the run fails instead of
/// computing wrong sums.
void skip_int8_implementations_not_exact(dnnl::primitive_desc& pd, const std::string& what);

/// Whether oneDNN implementation `impl` (impl_info_str()) is one of oneDNN's reference implementations
/// (oneDNN 2.6 names them "ref:any", "ref_int8:any", ...): plain loops, which a primitive descriptor lands on
/// when no optimized implementation takes the configuration, e.g. a plain-format convolution once the sgemm
/// ones are skipped (sgemm_runs): 25-121 ms where the blocked tactic takes 0.17-12 ms (densenet121).
bool is_reference_impl(const std::string& impl);

/// Fails with Unsupported, naming `what`, when `pd` resolved to one of oneDNN's reference implementations: a
/// oneDNN tactic running reference code is no optimized candidate (issue 22: reference kernels are the
/// fallback, never timed), so the builder drops it and the layer keeps the other optimized tactics, or the
/// backend's own "ref" row when none is left. Kernels call it where they are created, at the profile's opt
/// shape (where an empty tensor there accepts any implementation), only when the builder times candidates
/// (`info.tune`): a kernel re-created from a plan (load, refit) never refuses, since oneDNN's choice can differ
/// between processes (the OpenMP thread count current when the primitive is made: regnet_y_400mf's grouped
/// convolution compiled with an optimized plain primitive and refused at `kiln run`). A primitive made later
/// for another shape that lands there still runs.
void require_optimized(const LayerInfo& info, const dnnl::primitive_desc& pd, const std::string& what);

/// Moves `pd` past the implementations that cannot run in this process: those built on oneDNN's sgemm
/// (named "gemm:..." / "x64:gemm:...") where sgemm_runs() is false. Throws dnnl::error (unimplemented) when
/// no other implementation is left.
void skip_implementations_that_cannot_run(dnnl::primitive_desc& pd);

/// Sets the number of OpenMP threads oneDNN uses on the calling thread to the pool's size (1 without pool).
void use_pool_threads(const ThreadPool* pool);
/// Sets the number of OpenMP threads oneDNN uses on the calling thread. A primitive keeps the count it was
/// created with: call this with the same count before creating and before executing it.
void use_threads(int threads);

/// The threads a primitive of `macs` multiply-accumulates (or of `bytes` moved, for reorders) runs on: one
/// when it has work for fewer than two threads of kMacsPerThread (kBytesPerThread) each, else the pool's
/// (ThreadPool::team_for: never a team size between, which libgomp pays for in starting and ending threads).
/// On every thread a small layer pays a parallel region's wake-up and barrier for microseconds of work per
/// thread, and on a busy machine waits for whichever thread was descheduled: on the shared 2-core machine a
/// 5 us squeeze-excite convolution took 1.2 ms at 2 threads. Depends on the shape only, so a primitive's
/// creation and its runs agree.
int threads_for_macs(const ThreadPool* pool, double macs);
int threads_for_bytes(const ThreadPool* pool, double bytes);
/// A layer that computes `macs` and reads and writes `bytes` (activations and weights): whichever keeps more
/// threads busy. A matrix-vector product or a depthwise convolution does few multiply-accumulates per byte, so
/// its memory traffic sizes the team: mobilenet_v3_large's classifier (960x1280 weights, 4.9 MB, 1.2M
/// multiply-accumulates) ran on one thread at 0.34 ms of 4.2 with 16 available.
int threads_for_work(const ThreadPool* pool, double macs, double bytes);
/// About 20-40 us of fp32 work on one AVX2/AVX-512 core.
inline constexpr double kMacsPerThread = 1 << 20;
/// About 20-30 us of copying on one core.
inline constexpr double kBytesPerThread = 256 * 1024;
/// "OpenMP max threads N from <library path>": the OpenMP runtime oneDNN runs on, for error messages.
std::string threads_text();

/// A kernel's primitive for one input shape: `slot` (its state's entry for the shape), made by `make()` on
/// first use. A shape oneDNN has no primitive for is Unsupported, naming `what` ("convolution", ...).
template <typename Entry, typename Make>
Entry& entry_for_shape(std::unique_ptr<Entry>& slot, const char* what, Make&& make) {
  if (!slot) {
    try {
      slot = make();
    } catch (const dnnl::error& err) {
      KILN_FAIL(Unsupported, "oneDNN ", what, ": no primitive for the input shape it runs at: ", err.what());
    }
  }
  return *slot;
}

/// A weight tensor as contiguous fp32 values (converting fp16/bf16/fp64).
std::vector<float> weights_as_floats(const HostTensor& tensor);

/// A new memory of `md` holding the values at `data` (laid out as `user_md` says) reordered into md's layout:
/// how kernels prepare their constant weights once.
std::shared_ptr<dnnl::memory> reordered_copy(const dnnl::memory::desc& user_md, const void* data,
                                             const dnnl::memory::desc& md);

/// The oneDNN data type of a Kiln dtype the oneDNN kernels handle (f32, u8, s8).
DT dnnl_dtype(DType dtype);

/// Whether `dtype` is handled by the oneDNN kernels (fp32 only for now); when not, refuses saying so.
inline bool onednn_dtype_ok(DType dtype, std::string* why = nullptr) {
  return dtype == DType::Float32 || refuse(why, std::string(dtype_name(dtype)) + " (onednn takes f32)");
}

}  // namespace kiln::engine::cpu::onednn
