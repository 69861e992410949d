#pragma once
// CUDA C source of the NVRTC-compiled pointwise kernels (tactic "nvrtc"), generated per layer at build time.
// Plain C++ (no CUDA headers): the generator runs, and is tested, on machines without a GPU.
//
// One module per layer holds up to three entry points over the same straight-line instruction chain (the
// layer's pointwise program with concrete source and output dtypes, computing in float, or double for integer
// programs, with exactly the generic kernel's formulas, so both tactics give the same bits):
//   kiln_pw_general  any broadcast: per-dim index math over the output's rank (fixed for the plan)
//   kiln_pw_fast     each source indexed by a cheap pattern chosen at build from the opt shape (PwIndexMode):
//                    the flat index, a scalar, a contiguous run of dims (per row / per channel), or the
//                    leading and trailing dims around a broadcast run (a channels-last squeeze-excite scale)
//   kiln_pw_vec      like fast when every source is flat or scalar: 4 elements per thread, 4-wide loads and
//                    stores (used when the buffers are aligned)
// At run time the kernel checks that the actual shapes still fit the fast patterns, else runs the general
// entry point. Dims, strides and element counts that are static for the plan are literals; dynamic ones come
// from NvrtcPwArgs. Index math is 32-bit when the profile's max element count allows.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backends/cuda/launch.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/cuda/pointwise/pointwise_program.h"

namespace kiln::engine::cuda {

/// How a source is indexed from the flat output index i in the fast kernel.
enum class PwIndexMode : uint8_t {
  Full,        // same elements as the output: i
  Scalar,      // one element: 0
  Inner,       // the output's trailing dims: i % len
  Outer,       // the output's leading dims: i / div
  Channel,     // a run of middle dims: (i / div) % len
  OuterInner,  // the output's leading and trailing dims, broadcast between (a channels-last [N, 1, 1, C]
               // scale over [N, H, W, C]): (i / div) * len + i % len
  General,     // anything else (only the general kernel)
};
const char* pw_index_mode_name(PwIndexMode mode);

/// The fast-kernel pattern of a source of dims `src` broadcast to output dims `out`, with its div and len.
struct PwIndex {
  PwIndexMode mode = PwIndexMode::General;
  int64_t div = 1, len = 1;
};
PwIndex pw_index(const Dims& src, const Dims& out);

/// The kernel parameters (one struct passed by value). The generated source declares the same layout.
struct NvrtcPwArgs {
  const void* src[kMaxPwSources] = {};
  void* out = nullptr;
  int64_t n = 0;                             // output elements
  int64_t d[kMaxRank] = {};                  // output dims (general kernel)
  int64_t st[kMaxPwSources][kMaxRank] = {};  // per source: element strides over the output dims
  int64_t div[kMaxPwSources] = {}, len[kMaxPwSources] = {};  // per source: fast-kernel pattern
};

/// What the generated source is specialized on (all fixed for the plan).
struct NvrtcPwSpec {
  PwLayerProgram program;
  int rank = 0;                                  // output rank
  bool index64 = false;                          // 64-bit index math (max elements > 2^31)
  std::vector<int64_t> static_out;               // output dims when static for the plan, else empty
  std::vector<std::vector<int64_t>> static_src;  // per source: dims when static, else empty
  bool fast = false;                             // kiln_pw_fast exists
  bool vec = false;                              // kiln_pw_vec exists
  std::vector<PwIndex> fast_index;  // per source: the pattern at the opt shape (mode != General if fast)
};

/// The spec of a pointwise layer (Elementwise, Activation, Unary, Cast, Select, FusedPointwise).
NvrtcPwSpec nvrtc_pointwise_spec(const LayerInfo& layer);

/// The CUDA C source for `spec`: deterministic (the same spec gives the same text; it keys the module cache).
std::string nvrtc_pointwise_source(const NvrtcPwSpec& spec);

/// What the plan stores for an nvrtc kernel (Kernel::plan_data): the device code, the architecture it was
/// compiled for (e.g. 90 for sm_90) and the source it came from (a loaded plan uses the code only when the
/// layer still generates that source).
struct NvrtcPlanData {
  int arch = 0;
  std::string source;
  std::vector<uint8_t> cubin;
};
std::vector<uint8_t> encode_nvrtc_plan_data(const NvrtcPlanData& data);
/// Parses plan data of layer `layer`; throws kiln::Error(InvalidInput) on anything malformed.
NvrtcPlanData decode_nvrtc_plan_data(const std::vector<uint8_t>& bytes, const std::string& layer);

}  // namespace kiln::engine::cuda
