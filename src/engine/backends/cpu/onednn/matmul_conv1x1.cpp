// Matrix multiply by a constant matrix B as oneDNN's 1x1 convolution over the rows of A (tactic "onednn_1x1").
//
// A [..., K] row-major is a channels-last 1-D tensor (N = 1, C = K, W = the rows), B the convolution's weights
// (O = N columns, I = K), Y [..., N] the channels-last output: the same numbers as the matrix multiply, summed
// in another order. Where oneDNN 2.6's matmul runs on its sgemm (CPUs without AVX-512: its brgemm matmul is
// AVX-512 only), every call packs B again, and with B's rows 12 KB apart (GPT-2's 768 x 3072 fc weights) that
// packing runs at half speed; the 1x1 convolution's JIT kernel reads B in the blocked layout it was reordered to
// once, here. On this AMD EPYC (AVX2), one thread: GPT-2's 128 x 768 by 768 x 3072 product 14.6 -> 7.4 ms, its
// 768 x 2304 one 6.0 -> 5.2 (bench: min of 20 calls). Bias, eltwise post-ops and the residual sum are the
// convolution's post-ops, as in the matmul.
//
// Registered after "onednn", so preferred to it where both apply (untimed builds, and contests on a loaded
// machine, where only a 2x margin overrides the preference). As a timing candidate it refuses where oneDNN's
// matmul for the layer does not run on sgemm (AVX-512 CPUs: brgemm with B prepared once, 86-92% of a core's
// peak, bench/cpu/README.md) and where its own primitive would be oneDNN's sgemm or reference convolution.

#include <cstring>
#include <map>
#include <memory>

#include "engine/backends/cpu/onednn/conv_geometry.h"
#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/onednn/register.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

struct Conv1x1State : KernelState {
  std::map<int64_t, std::unique_ptr<ConvPrimitive>> entries;  // per row count
  dnnl::stream stream{cpu_engine()};
};

/// A [rows, channels] row-major matrix as a channels-last 1-D activation.
memory::desc rows_md(int64_t rows, int64_t channels) {
  return memory::desc({1, channels, rows}, DT::f32, {rows * channels, 1, channels});
}

/// B's K and N (its last two dims, the ones before them all 1).
struct BShape {
  int64_t k = 0, n = 0;
};
BShape b_shape(const HostTensor& b, bool transpose_b) {
  const Dims& d = b.sizes();
  const int64_t r0 = d[d.size() - 2], r1 = d[d.size() - 1];
  return transpose_b ? BShape{r1, r0} : BShape{r0, r1};
}

class MatmulConv1x1Kernel : public Kernel {
 public:
  explicit MatmulConv1x1Kernel(const LayerInfo& info) {
    const Layer& layer = *info.layer;
    const auto& p = layer.get<MatrixMultiplyParams>();
    const HostTensor& b = layer.weights[0].value;
    const BShape s = b_shape(b, p.transpose_b);
    k_ = s.k;
    n_ = s.n;
    b_values_ = weights_as_floats(b);
    if (layer.weights.size() > 1 && layer.weights[1].defined()) {
      bias_values_ = weights_as_floats(layer.weights[1].value);
      bias_md_ = memory::desc({n_}, DT::f32, Tag::a);
    }
    // Weights [O = N, I = K, 1] over B's memory: [K, N] (B[k][n] at k * N + n) or, transposed, [N, K].
    weights_user_md_ = p.transpose_b ? memory::desc({n_, k_, 1}, DT::f32, {k_, 1, 1})
                                     : memory::desc({n_, k_, 1}, DT::f32, {1, n_, 1});
    residual_input_ = count_sum_post_ops(p.post_ops) > 0 ? first_residual_input(layer) : -1;
    attr_ = make_attr(p.post_ops);
    const int64_t rows = rows_of(info.outputs[0].opt);
    dnnl::primitive_desc pd;
    try {
      pd = make_pd(rows);
    } catch (const dnnl::error& e) {
      KILN_FAIL(Unsupported, "matrix multiply '", layer.name, "' as a 1x1 convolution: no oneDNN primitive: ",
                e.what());
    }
    require_optimized(info, pd, "matrix multiply '" + layer.name + "' as a 1x1 convolution");
    if (info.tune) {
      KILN_CHECK(!built_on_sgemm(pd.impl_info_str()), Unsupported, "matrix multiply '", layer.name,
                 "' as a 1x1 convolution: oneDNN runs it on sgemm ('", pd.impl_info_str(), "'), as 'onednn' does");
      const std::string matmul = matmul_impl(rows);
      KILN_CHECK(built_on_sgemm(matmul), Unsupported, "matrix multiply '", layer.name, "': oneDNN's matmul runs it on '",
                 matmul, "', not on sgemm: no 1x1 convolution needed");
    }
    prepared_md_ = pd.weights_desc();
    prepared_ = reorder_b(prepared_md_);
  }

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<Conv1x1State>(); }

  void execute(KernelArgs& args) const override {
    auto* state = static_cast<Conv1x1State*>(args.state);
    KILN_CHECK(state != nullptr, Internal, "oneDNN 1x1 matrix multiply executed without its state");
    const TensorView& a = args.inputs[0];
    const TensorView& y = args.outputs[0];
    const int64_t rows = rows_of(y.dims);
    // Before creating the primitive (see convolution.cpp).
    use_threads(threads_for_work(args.pool, static_cast<double>(y.numel()) * static_cast<double>(k_),
                                 static_cast<double>(a.nbytes() + y.nbytes() + b_values_.size() * sizeof(float))));
    ConvPrimitive& e = entry_for_shape(state->entries[rows], "1x1 convolution", [&] {
      return std::make_unique<ConvPrimitive>(make_pd(rows), prepared_md_, prepared_,
                                             [&](const memory::desc& md) { return reorder_b(md); });
    });
    if (residual_input_ >= 0) {
      const TensorView& r = args.inputs[residual_input_];
      if (r.data != y.data) std::memcpy(y.data, r.data, y.nbytes());
    }
    std::unordered_map<int, memory> margs{{DNNL_ARG_SRC, memory(e.src_md, cpu_engine(), a.data)},
                                          {DNNL_ARG_WEIGHTS, *e.weights},
                                          {DNNL_ARG_DST, memory(e.dst_md, cpu_engine(), y.data)},
                                          {DNNL_ARG_SCRATCHPAD, e.scratchpad}};
    if (!bias_values_.empty()) {
      margs.emplace(DNNL_ARG_BIAS, memory(bias_md_, cpu_engine(), const_cast<float*>(bias_values_.data())));
    }
    try {
      e.conv.execute(state->stream, margs);
      state->stream.wait();
    } catch (const dnnl::error& err) {
      KILN_FAIL(Internal, "oneDNN 1x1 matrix multiply (implementation '", e.impl, "', ", threads_text(),
                "): ", err.what());
    }
  }

 private:
  int64_t rows_of(const Dims& y) const {
    int64_t n = 1;
    for (int64_t d : y) n *= d;
    return n_ > 0 ? n / n_ : 0;
  }

  dnnl::primitive_desc make_pd(int64_t rows) const {
    memory::desc wts(weights_user_md_.dims(), DT::f32, Tag::any);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      rows_md(rows, k_), wts, bias_md_, rows_md(rows, n_), {1}, {0}, {0});
    dnnl::convolution_forward::primitive_desc pd(d, attr_, cpu_engine());
    skip_implementations_that_cannot_run(pd);
    return pd;
  }

  /// The implementation oneDNN's matmul primitive (the "onednn" tactic) takes for this product at `rows`.
  std::string matmul_impl(int64_t rows) const {
    memory::desc bias = bias_values_.empty() ? memory::desc() : memory::desc({1, n_}, DT::f32, Tag::ab);
    dnnl::matmul::desc d(memory::desc({rows, k_}, DT::f32, Tag::ab), memory::desc({k_, n_}, DT::f32, Tag::any),
                         bias, memory::desc({rows, n_}, DT::f32, Tag::ab));
    try {
      return dnnl::matmul::primitive_desc(d, attr_, cpu_engine()).impl_info_str();
    } catch (const dnnl::error&) {
      return "none";
    }
  }

  std::shared_ptr<memory> reorder_b(const memory::desc& md) const {
    return reordered_copy(weights_user_md_, b_values_.data(), md);
  }

  int64_t k_ = 0, n_ = 0;
  int64_t residual_input_ = -1;
  std::vector<float> b_values_, bias_values_;
  memory::desc weights_user_md_, bias_md_, prepared_md_;
  std::shared_ptr<memory> prepared_;
  dnnl::primitive_attr attr_;
};

bool matmul_conv1x1_applies(const LayerInfo& info, std::string* why) {
  const Layer& layer = *info.layer;
  const auto& p = layer.get<MatrixMultiplyParams>();
  if (layer.weights.empty() || !layer.weights[0].defined()) return refuse(why, "B is not a constant");
  const HostTensor& b = layer.weights[0].value;
  if (!is_floating(b.dtype())) return refuse(why, "an integer constant B");
  if (b.dim() < 2) return refuse(why, "B of rank " + std::to_string(b.dim()));
  for (int64_t i = 0; i + 2 < b.dim(); ++i) {
    if (b.sizes()[static_cast<size_t>(i)] != 1) return refuse(why, "a batch of B matrices");
  }
  if (p.transpose_a) return refuse(why, "A transposed");
  if (info.inputs[0].opt.empty()) return refuse(why, "A of rank 0");
  if (!onednn_dtype_ok(info.inputs[0].dtype, why) || !onednn_dtype_ok(info.outputs[0].dtype, why)) return false;
  return matmul_post_ops_fit(info, p.post_ops, why);
}

}  // namespace

void register_onednn_matmul_conv1x1(KernelTable& registry) {
  registry.add(KernelRow{"onednn_1x1", LayerKind::MatrixMultiply, matmul_conv1x1_applies, [](const LayerInfo& info) {
                           return std::unique_ptr<Kernel>(std::make_unique<MatmulConv1x1Kernel>(info));
                         }});
}

}  // namespace kiln::engine::cpu::onednn
