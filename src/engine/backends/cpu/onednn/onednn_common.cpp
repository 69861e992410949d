#include "engine/backends/cpu/onednn/onednn_common.h"

#include <dlfcn.h>

#include <cmath>
#include <cstring>

#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

// Selu = scale * elu(x, alpha) with torch's constants.
constexpr double kSeluAlpha = 1.6732632423543772;
constexpr double kSeluScale = 1.0507009873554805;

/// Appends the eltwise post-op(s) for `a`; returns false when oneDNN has no equivalent.
bool append_activation(const ActivationParams& a, dnnl::post_ops* ops) {
  using dnnl::algorithm;
  auto add = [&](algorithm alg, double alpha, double beta) {
    if (ops) ops->append_eltwise(1.0f, alg, static_cast<float>(alpha), static_cast<float>(beta));
  };
  switch (a.kind) {
    case ActivationKind::Relu: add(algorithm::eltwise_relu, 0, 0); return true;
    case ActivationKind::LeakyRelu: add(algorithm::eltwise_relu, a.alpha, 0); return true;
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
    case ActivationKind::Clip: add(algorithm::eltwise_clip_v2, a.alpha, a.beta); return true;
    case ActivationKind::Mish: add(algorithm::eltwise_mish, 0, 0); return true;
    case ActivationKind::HardSigmoid:
      // clip(alpha*x + beta, 0, 1) as linear then clip.
      add(algorithm::eltwise_linear, a.alpha, a.beta);
      add(algorithm::eltwise_clip_v2, 0.0, 1.0);
      return true;
    case ActivationKind::Softplus:
    case ActivationKind::Softsign: return false;
  }
  return false;
}

}  // namespace

const dnnl::engine& cpu_engine() {
  static const dnnl::engine kEngine(dnnl::engine::kind::cpu, 0);
  return kEngine;
}

dnnl::memory::dims to_dnnl_dims(const Dims& dims) { return dnnl::memory::dims(dims.begin(), dims.end()); }

dnnl::memory::dims dense_strides(const dnnl::memory::dims& dims) {
  dnnl::memory::dims s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

dnnl::memory::desc activation_md(const Dims& dims, DT dtype, TensorFormat format) {
  using Tag = dnnl::memory::format_tag;
  dnnl::memory::dims d = to_dnnl_dims(dims);
  KILN_CHECK(format_applies(format, dims.size()), Internal, "format ", tensor_format_name(format), " for rank ",
             dims.size());
  if (format == TensorFormat::Plain) return dnnl::memory::desc(d, dtype, dense_strides(d));
  static const Tag kTags[3][3] = {{Tag::aBc8b, Tag::aBc16b, Tag::acb},
                                  {Tag::aBcd8b, Tag::aBcd16b, Tag::acdb},
                                  {Tag::aBcde8b, Tag::aBcde16b, Tag::acdeb}};
  return dnnl::memory::desc(d, dtype, kTags[dims.size() - 3][static_cast<int>(format) - 1]);
}

TensorFormat format_of(const dnnl::memory::desc& md, const Dims& dims) {
  for (int f = 1; f < kNumTensorFormats; ++f) {
    auto format = static_cast<TensorFormat>(f);
    if (format_applies(format, dims.size()) && md == activation_md(dims, md.data_type(), format)) return format;
  }
  return TensorFormat::Plain;
}

bool post_ops_supported(const std::vector<PostOp>& post_ops, std::string* why) {
  int sums = 0;
  for (const PostOp& op : post_ops) {
    if (op.kind == PostOp::Sum) {
      if (++sums > 1) {
        if (why) *why = "more than one residual post-op";
        return false;
      }
    } else if (!append_activation(op.activation, nullptr)) {
      if (why) *why = std::string("activation ") + activation_kind_name(op.activation.kind) + " has no oneDNN post-op";
      return false;
    }
  }
  return true;
}

dnnl::primitive_attr make_attr(const std::vector<PostOp>& post_ops) {
  dnnl::post_ops ops;
  for (const PostOp& op : post_ops) {
    if (op.kind == PostOp::Sum) {
      ops.append_sum(static_cast<float>(op.scale));
    } else {
      KILN_CHECK(append_activation(op.activation, &ops), Internal, "oneDNN: unsupported post-op activation ",
                 activation_kind_name(op.activation.kind));
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  // Each kernel state owns its primitive's scratchpad: Debian's oneDNN shares one global scratchpad between
  // primitives in the default (library) mode, so two execution contexts running at once would overwrite it.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void use_pool_threads(const ThreadPool* pool) {
  // oneDNN here is built on OpenMP; its thread count is the calling thread's OpenMP setting. The symbol is
  // looked up at run time because libgomp is only an indirect dependency (through libdnnl).
  using SetThreads = void (*)(int);
  static const SetThreads kSet = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  // Set on every call: other code on this thread (e.g. libtorch) may have changed it meanwhile.
  if (kSet) kSet(pool ? pool->size() : 1);
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
