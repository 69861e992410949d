#include "engine/backends/cpu/onednn/onednn_common.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "engine/ops/shape_inference.h"
#include "kiln/support/error.h"
#include "kiln/support/host_math.h"

namespace kiln::engine::cpu::onednn {
namespace {

// Selu = scale * elu(x, alpha) with torch's constants.
constexpr double kSeluAlpha = 1.6732632423543772;
constexpr double kSeluScale = 1.0507009873554805;

/// One oneDNN eltwise post-op.
struct Eltwise {
  dnnl::algorithm alg;
  float alpha, beta;
};

// oneDNN 2.6's JIT eltwise relu (alpha 0) and clip compute max(x, lo) / min(x, hi) with the vmaxps/vminps
// operand order that maps NaN to the bound, where torch propagates NaN. Its elu keeps NaN, and elu with alpha
// 0 is exactly relu for every other value (0 * (exp(x) - 1) is a zero), so relu is elu(0) followed by x*1 +
// 0, which turns elu's -0 into torch's +0. A clip with a finite upper bound hi uses min(y, hi) = hi - relu(hi
// - y).
constexpr Eltwise kEluZero{dnnl::algorithm::eltwise_elu, 0.0f, 0.0f};
constexpr Eltwise kPlusZero{dnnl::algorithm::eltwise_linear, 1.0f, 0.0f};

/// Appends the eltwise post-ops computing `a` with torch's NaN semantics; false when oneDNN has no such form.
bool append_activation(const ActivationParams& a, std::vector<Eltwise>& steps) {
  using dnnl::algorithm;
  auto add = [&](algorithm alg, double alpha, double beta) {
    steps.push_back(Eltwise{alg, static_cast<float>(alpha), static_cast<float>(beta)});
  };
  auto upper_bound = [&](double hi) {
    add(algorithm::eltwise_linear, -1.0, hi);
    steps.push_back(kEluZero);
    add(algorithm::eltwise_linear, -1.0, hi);
  };
  switch (a.kind) {
    case ActivationKind::Relu: steps.push_back(kEluZero), steps.push_back(kPlusZero); return true;
    case ActivationKind::LeakyRelu:
      // oneDNN's relu with a nonzero slope selects by x > 0 and keeps NaN; slope 0 is relu.
      if (a.alpha == 0) return append_activation(ActivationParams{ActivationKind::Relu}, steps);
      add(algorithm::eltwise_relu, a.alpha, 0);
      return true;
    case ActivationKind::Sigmoid: add(algorithm::eltwise_logistic, 0, 0); return true;
    case ActivationKind::Tanh: add(algorithm::eltwise_tanh, 0, 0); return true;
    case ActivationKind::GeluErf: add(algorithm::eltwise_gelu_erf, 0, 0); return true;
    case ActivationKind::GeluTanh: add(algorithm::eltwise_gelu_tanh, 0, 0); return true;
    case ActivationKind::Silu: add(algorithm::eltwise_swish, 1.0, 0); return true;
    case ActivationKind::HardSwish: add(algorithm::eltwise_hardswish, 0, 0); return true;
    case ActivationKind::Elu: add(algorithm::eltwise_elu, a.alpha, 0); return true;
    case ActivationKind::Selu:
      add(algorithm::eltwise_elu, kSeluAlpha, 0);
      add(algorithm::eltwise_linear, kSeluScale, 0);
      return true;
    case ActivationKind::Clip: {
      // Lower bound 0 or none: exact through elu(0); any other lower bound would need a second, different
      // linear post-op (see post_ops_supported), so such clips stay out of oneDNN.
      bool lower = !(std::isinf(a.alpha) && a.alpha < 0), upper = !(std::isinf(a.beta) && a.beta > 0);
      if (lower && a.alpha != 0) return false;
      if (lower) steps.push_back(kEluZero);
      if (upper)
        upper_bound(a.beta);
      else if (lower)
        steps.push_back(kPlusZero);
      return true;
    }
    case ActivationKind::Mish: add(algorithm::eltwise_mish, 0, 0); return true;
    case ActivationKind::HardSigmoid:  // clip(alpha*x + beta, 0, 1): two different linear post-ops
    case ActivationKind::Softplus:
    case ActivationKind::Softsign: return false;
  }
  return false;
}

/// The eltwise post-ops of every activation in `post_ops` (Sum post-ops skipped); false with `why` when an
/// activation has no oneDNN form, or when one algorithm would appear twice with different parameters:
/// oneDNN 2.6's brgemm convolution and matmul kernels then apply the first one's alpha and beta to both.
bool eltwise_steps(const std::vector<PostOp>& post_ops, std::vector<std::vector<Eltwise>>* per_op,
                   std::string* why) {
  std::vector<Eltwise> all;
  for (const PostOp& op : post_ops) {
    std::vector<Eltwise> steps;
    if (op.kind == PostOp::Activation && !append_activation(op.activation, steps)) {
      if (why)
        *why =
            std::string("activation ") + activation_kind_name(op.activation.kind) + " has no oneDNN post-op";
      return false;
    }
    for (const Eltwise& e : steps) {
      for (const Eltwise& seen : all) {
        if (seen.alg == e.alg && (seen.alpha != e.alpha || seen.beta != e.beta)) {
          if (why) *why = "one oneDNN eltwise algorithm twice with different parameters";
          return false;
        }
      }
      all.push_back(e);
    }
    if (per_op) per_op->push_back(std::move(steps));
  }
  return true;
}

}  // namespace

const dnnl::engine& cpu_engine() {
  static const dnnl::engine kEngine(dnnl::engine::kind::cpu, 0);
  return kEngine;
}

dnnl::memory::dims to_dnnl_dims(const Dims& dims) { return dnnl::memory::dims(dims.begin(), dims.end()); }

dnnl::memory::dims dense_strides(const dnnl::memory::dims& dims) { return contiguous_strides(dims); }

dnnl::memory::desc activation_md(const Dims& dims, DT dtype, TensorFormat format) {
  using Tag = dnnl::memory::format_tag;
  dnnl::memory::dims d = to_dnnl_dims(dims);
  KILN_CHECK(format_applies(format, dims.size()) && format != TensorFormat::E4M3, Internal, "format ",
             tensor_format_name(format), " for rank ", dims.size(), " on oneDNN");
  if (format == TensorFormat::Plain) return dnnl::memory::desc(d, dtype, dense_strides(d));
  static const Tag kTags[3][3] = {{Tag::aBc8b, Tag::aBc16b, Tag::acb},
                                  {Tag::aBcd8b, Tag::aBcd16b, Tag::acdb},
                                  {Tag::aBcde8b, Tag::aBcde16b, Tag::acdeb}};
  return dnnl::memory::desc(d, dtype, kTags[dims.size() - 3][static_cast<int>(format) - 1]);
}

TensorFormat format_of(const dnnl::memory::desc& md, const Dims& dims) {
  for (int f = 1; f <= static_cast<int>(TensorFormat::ChannelsLast); ++f) {  // (the layouts oneDNN has)
    auto format = static_cast<TensorFormat>(f);
    if (format_applies(format, dims.size()) && md == activation_md(dims, md.data_type(), format))
      return format;
  }
  return TensorFormat::Plain;
}

bool post_ops_supported(const std::vector<PostOp>& post_ops, std::string* why) {
  int sums = 0;
  for (const PostOp& op : post_ops) {
    if (op.kind == PostOp::Sum && ++sums > 1) {
      if (why) *why = "more than one residual post-op";
      return false;
    }
  }
  return eltwise_steps(post_ops, nullptr, why);
}

bool matmul_post_ops_fit(const LayerInfo& info, const std::vector<PostOp>& post_ops, std::string* why) {
  if (!post_ops_supported(post_ops, why)) return false;
  if (count_sum_post_ops(post_ops) > 0) {
    const TensorInfo& r = info.inputs[static_cast<size_t>(first_residual_input(*info.layer))];
    const TensorInfo& y = info.outputs[0];
    if (r.dtype != y.dtype || r.min != y.min || r.opt != y.opt || r.max != y.max) {
      return refuse(why, "a residual of another dtype or dims than the output");
    }
  }
  return true;
}

std::shared_ptr<dnnl::memory> reordered_copy(const dnnl::memory::desc& user_md, const void* data,
                                             const dnnl::memory::desc& md) {
  auto out = std::make_shared<dnnl::memory>(md, cpu_engine());
  dnnl::memory user(user_md, cpu_engine(), const_cast<void*>(data));
  dnnl::stream s(cpu_engine());
  dnnl::reorder(user, *out).execute(s, user, *out);
  s.wait();
  return out;
}

DT dnnl_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float32: return DT::f32;
    case DType::UInt8: return DT::u8;
    case DType::Int8: return DT::s8;
    default: KILN_FAIL(Internal, "oneDNN kernels do not handle ", dtype_name(dtype));
  }
}

dnnl::primitive_attr make_attr(const std::vector<PostOp>& post_ops, float sum_factor, DT sum_dtype) {
  std::vector<std::vector<Eltwise>> steps;
  std::string why;
  KILN_CHECK(eltwise_steps(post_ops, &steps, &why), Internal, "oneDNN: unsupported post-ops: ", why);
  dnnl::post_ops ops;
  for (size_t i = 0; i < post_ops.size(); ++i) {
    if (post_ops[i].kind == PostOp::Sum)
      ops.append_sum(static_cast<float>(post_ops[i].scale) * sum_factor, 0, sum_dtype);
    for (const Eltwise& e : steps[i]) ops.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  // Each kernel state owns its primitive's scratchpad: Debian's oneDNN shares one global scratchpad between
  // primitives in the default (library) mode, so two execution contexts running at once would overwrite it.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool sgemm_runs() {
  static const bool kRuns = [] {
    const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    float c[4] = {0, 0, 0, 0};
    // Row-major [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
    dnnl_status_t status = dnnl_sgemm('N', 'N', 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
    return status == dnnl_success && c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50;
  }();
  return kRuns;
}

bool built_on_sgemm(const std::string& impl) {
  std::string_view n = impl;
  if (n.starts_with("x64:")) n.remove_prefix(4);
  return n.starts_with("gemm:");
}

bool is_reference_impl(const std::string& impl) { return impl.starts_with("ref"); }

namespace {
bool has_vnni() {
  static const bool vnni = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    constexpr unsigned kAvx512Vnni = dnnl_cpu_isa_avx512_core_vnni & ~dnnl_cpu_isa_avx512_core;
    constexpr unsigned kAvx2Vnni = dnnl_cpu_isa_avx2_vnni & ~dnnl_cpu_isa_avx2;
    return (isa & (kAvx512Vnni | kAvx2Vnni)) != 0;
  }();
  return vnni;
}
}  // namespace

bool int8_products_exact(std::string* why) {
  return has_vnni() ||
         refuse(why,
                "this CPU has no VNNI: oneDNN's INT8 kernels would add u8 x s8 product pairs in "
                "saturating 16 bits");
}

int32_t int8_weight_max() { return has_vnni() ? 127 : 63; }

int32_t signed_input_zero_point() { return has_vnni() ? 0 : 128; }

bool int8_layer_exact(DType input, bool program_scales, std::string* why) {
  if (has_vnni()) return true;
  if (input != DType::UInt8) {
    return refuse(
        why, "this CPU has no VNNI: oneDNN would halve the weights of an INT8 layer with a signed input stored as "
             "s8 (another INT8 layer's output)");
  }
  return !program_scales ||
         refuse(why,
                "this CPU has no VNNI: the program's 8-bit weights would overflow oneDNN's 16-bit sums of "
                "u8 x s8 product pairs");
}

bool int8_impl_exact(const std::string& impl, int32_t weight_max, std::string* why) {
  if (weight_max <= 63) return true;
  for (const char* with_vnni : {"vnni", "amx", "avx512_core_bf16", "avx512_core_fp16"}) {
    if (impl.find(with_vnni) != std::string::npos) return true;
  }
  for (const char* without : {"sse41", "avx2", "avx512", "avx"}) {
    if (impl.find(without) != std::string::npos) {
      return refuse(why,
                    "oneDNN's implementation '" + impl +
                        "' adds u8 x s8 product pairs in saturating 16 bits (no VNNI), too few for 8-bit "
                        "weights");
    }
  }
  return true;
}

void skip_int8_implementations_not_exact(dnnl::primitive_desc& pd, const std::string& what) {
  std::string why;
  while (!int8_impl_exact(pd.impl_info_str(), int8_weight_max(), &why)) {
    KILN_CHECK(pd.next_impl(), Unsupported, what, ": every oneDNN implementation is inexact, the last: ", why);
  }
}

void require_optimized(const LayerInfo& info, const dnnl::primitive_desc& pd, const std::string& what) {
  if (!info.tune) return;
  // An empty tensor at the opt shape: oneDNN's implementations for zero volumes are the reference ones, and
  // kernels never run on empty tensors anyway.
  for (const dnnl::memory::desc& md : {pd.src_desc(), pd.weights_desc(), pd.dst_desc()}) {
    for (int64_t d : md.dims()) {
      if (d == 0) return;
    }
  }
  const std::string impl = pd.impl_info_str();
  KILN_CHECK(!is_reference_impl(impl), Unsupported, what, ": oneDNN has only its reference implementation '",
             impl, "' for it, no optimized candidate");
}

void skip_implementations_that_cannot_run(dnnl::primitive_desc& pd) {
  if (sgemm_runs()) return;
  while (built_on_sgemm(pd.impl_info_str())) {
    if (!pd.next_impl()) {
      throw dnnl::error(dnnl_unimplemented,
                        "only implementations built on sgemm, which cannot run in this process");
    }
  }
}

void use_threads(int threads) {
  // oneDNN here is built on OpenMP; its thread count is the calling thread's OpenMP setting. The symbol is
  // looked up at run time because libgomp is only an indirect dependency (through libdnnl).
  using SetThreads = void (*)(int);
  static const SetThreads kSet = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  // Set on every call: other code on this thread (e.g. libtorch) may have changed it meanwhile.
  if (kSet) kSet(std::max(threads, 1));
}

void use_pool_threads(const ThreadPool* pool) { use_threads(pool ? pool->size() : 1); }

namespace {
int threads_for(const ThreadPool* pool, double wanted) {
  if (pool == nullptr || !(wanted > 0)) return 1;  // (NaN too)
  return pool->team_for(static_cast<int64_t>(std::min<double>(pool->size(), std::floor(wanted))));
}
}  // namespace

int threads_for_macs(const ThreadPool* pool, double macs) { return threads_for(pool, macs / kMacsPerThread); }
int threads_for_bytes(const ThreadPool* pool, double bytes) {
  return threads_for(pool, bytes / kBytesPerThread);
}
int threads_for_work(const ThreadPool* pool, double macs, double bytes) {
  return threads_for(pool, std::max(macs / kMacsPerThread, bytes / kBytesPerThread));
}

std::string threads_text() {
  using MaxThreads = int (*)();
  void* symbol = dlsym(RTLD_DEFAULT, "omp_get_max_threads");
  if (symbol == nullptr) return "no OpenMP runtime found";
  Dl_info info{};
  const char* library = dladdr(symbol, &info) != 0 && info.dli_fname ? info.dli_fname : "?";
  return "OpenMP max threads " + std::to_string(reinterpret_cast<MaxThreads>(symbol)()) + " from " + library;
}

std::vector<float> weights_as_floats(const HostTensor& tensor) {
  int64_t n = tensor.numel();
  std::vector<float> out(static_cast<size_t>(n));
  if (tensor.dtype() == DType::Float32) {
    if (n) std::memcpy(out.data(), tensor.data(), static_cast<size_t>(n) * sizeof(float));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(tensor.get_as_double(i));
  }
  return out;
}

}  // namespace kiln::engine::cpu::onednn
