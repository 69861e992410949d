// oneDNN INT8 matrix multiply: the "onednn_int8" tactic (Tactic::int8) for a layer with a constant
// single-matrix B (a linear layer) and an fp32 A with a dynamic range, not transposed; offered by the builder
// only where its INT8 policy allows (engine/core/int8_policy.h). A's batch dims fold into M: one [M, K] x [K,
// N] GEMM.
//
//   A       quantized per tensor by a oneDNN reorder into the kernel's own buffer: u8 where its range is
//           non-negative, else s8 (DynamicRange::scale()); on a CPU without VNNI a signed A is stored as u8
//           with zero point 128 (signed_input_zero_point), the same integers shifted.
//   B       s8, symmetric, one scale per output column n (ops::quantize_per_channel), prepared once; 7-bit
//           on a CPU without VNNI (int8_weight_max); 8-bit ones only on a oneDNN implementation that adds
//           them in 32 bits (skip_int8_implementations_not_exact).
//   bias    fp32, divided by the A and B scales (oneDNN 2.x adds it to the s32 accumulator before the output
//           scales).
//   output  fp32: output scales per column = A scale x B scale; post-ops (activations, a fp32 residual sum)
//           then act on real values as in the fp32 kernel.
// Primitives are cached per input shape in the per-context state, each with its quantized-A buffer.

#include <cstring>
#include <map>
#include <memory>

#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/onednn/register.h"
#include "engine/ops/quantize.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct Int8MatmulEntry {
  dnnl::matmul prim;
  dnnl::primitive quantize;
  memory::desc a_md, src_md, dst_md;
  memory quantized;
  std::shared_ptr<memory> weights;
  memory scratchpad;
};

struct Int8MatmulState : KernelState {
  std::map<Dims, std::unique_ptr<Int8MatmulEntry>> entries;
  dnnl::stream stream{cpu_engine()};
};

bool int8_matmul_applies(const LayerInfo& info, std::string* why = nullptr) {
  const Layer& layer = *info.layer;
  const auto& p = layer.get<MatrixMultiplyParams>();
  if (layer.weights.empty() || !layer.weights[0].defined() || !is_floating(layer.weights[0].value.dtype()) ||
      layer.weights[0].value.dim() != 2) {
    return refuse(why, "B is not a constant floating-point matrix");
  }
  if (p.transpose_a) return refuse(why, "A transposed");
  const TensorInfo& a = info.inputs[0];
  const TensorInfo& y = info.outputs[0];
  if (!onednn_dtype_ok(a.dtype, why) || !onednn_dtype_ok(y.dtype, why)) return false;
  if (!a.range || !a.range->usable()) return refuse(why, "no usable dynamic range on A");
  const bool stored_u8 = a.range->non_negative() || signed_input_zero_point() != 0;
  if (!int8_layer_exact(stored_u8 ? DType::UInt8 : DType::Int8, !layer.weights[0].int8_scales.empty(), why)) {
    return false;
  }
  if (a.opt.size() < 2) return refuse(why, "A of rank < 2");
  if (!post_ops_supported(p.post_ops, why)) return false;
  if (count_sum_post_ops(p.post_ops) > 0) {
    const TensorInfo& r = info.inputs[static_cast<size_t>(first_residual_input(layer))];
    if (r.dtype != y.dtype || r.min != y.min || r.opt != y.opt || r.max != y.max) {
      return refuse(why, "a residual of another dtype or dims than the output");
    }
  }
  return true;
}

class Int8MatmulKernel : public Kernel {
 public:
  explicit Int8MatmulKernel(const LayerInfo& info) {
    const Layer& layer = *info.layer;
    std::string why;
    KILN_CHECK(int8_matmul_applies(info, &why), InvalidInput, "matrix multiply '", layer.name,
               "': the INT8 tactic does not apply here: ", why);
    const auto& p = layer.get<MatrixMultiplyParams>();
    name_ = layer.name;
    residual_input_ = count_sum_post_ops(p.post_ops) > 0 ? first_residual_input(layer) : -1;
    const DynamicRange& range = *info.inputs[0].range;
    src_zero_point_ = range.non_negative() ? 0 : signed_input_zero_point();
    src_dt_ = range.non_negative() || src_zero_point_ != 0 ? DT::u8 : DT::s8;
    a_scale_ = range.scale();
    const HostTensor& b = layer.weights[0].value;
    transpose_b_ = p.transpose_b;
    k_ = b.sizes()[transpose_b_ ? 1 : 0];
    n_ = b.sizes()[transpose_b_ ? 0 : 1];
    // B's output channels are its columns: [K, N] has them inner (outer K), [N, K] (transposed) outer.
    const std::vector<float>& given = layer.weights[0].int8_scales;
    const ops::QuantizedWeights q =
        transpose_b_ ? ops::quantize_per_channel(weights_as_floats(b), 1, n_, k_, given, int8_weight_max())
                     : ops::quantize_per_channel(weights_as_floats(b), k_, n_, 1, given, int8_weight_max());
    b_values_ = q.values;
    std::vector<float> output_scales(static_cast<size_t>(n_));
    for (int64_t c = 0; c < n_; ++c) output_scales[c] = a_scale_ * q.scales[c];
    if (layer.weights.size() > 1 && layer.weights[1].defined()) {
      bias_values_ = weights_as_floats(layer.weights[1].value);
      for (int64_t c = 0; c < n_; ++c) bias_values_[c] /= a_scale_ * q.scales[c];
    }
    attr_ = make_attr(p.post_ops);
    attr_.set_output_scales(1 << 1, output_scales);
    if (src_zero_point_ != 0) attr_.set_zero_points(DNNL_ARG_SRC, 0, {src_zero_point_});
    try {
      auto pd = make_pd(rows(info.inputs[0].opt));
      require_optimized(info, pd, "INT8 matrix multiply '" + layer.name + "'");
      prepared_md_ = pd.weights_desc();
      prepared_ = reorder_b(prepared_md_);
    } catch (const dnnl::error& e) {
      KILN_FAIL(Unsupported, "matrix multiply '", layer.name,
                "': oneDNN has no INT8 primitive for it: ", e.what());
    }
  }

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<Int8MatmulState>(); }

  void execute(KernelArgs& args) const override {
    auto* state = static_cast<Int8MatmulState*>(args.state);
    KILN_CHECK(state != nullptr, Internal, "oneDNN INT8 matrix multiply executed without its state");
    const TensorView& a = args.inputs[0];
    const TensorView& y = args.outputs[0];
    // Before creating the primitive (see convolution.cpp): y's elements times K.
    use_threads(threads_for_macs(args.pool, static_cast<double>(y.numel()) * static_cast<double>(k_)));
    Int8MatmulEntry& e = entry_for_shape(state->entries[a.dims], "INT8 matrix multiply",
                                         [&] { return make_entry(rows(a.dims)); });
    if (residual_input_ >= 0) {
      const TensorView& r = args.inputs[residual_input_];
      if (r.data != y.data) std::memcpy(y.data, r.data, y.nbytes());
    }
    dnnl::stream& s = state->stream;
    try {
      memory in(e.a_md, cpu_engine(), a.data);
      e.quantize.execute(s, {{DNNL_ARG_FROM, in}, {DNNL_ARG_TO, e.quantized}});
      std::unordered_map<int, memory> margs{{DNNL_ARG_SRC, e.quantized},
                                            {DNNL_ARG_WEIGHTS, *e.weights},
                                            {DNNL_ARG_DST, memory(e.dst_md, cpu_engine(), y.data)},
                                            {DNNL_ARG_SCRATCHPAD, e.scratchpad}};
      if (!bias_values_.empty()) {
        margs.emplace(DNNL_ARG_BIAS,
                      memory(bias_md(), cpu_engine(), const_cast<float*>(bias_values_.data())));
      }
      e.prim.execute(s, margs);
      s.wait();
    } catch (const dnnl::error& err) {
      KILN_FAIL(Internal, "oneDNN INT8 matrix multiply (status ", static_cast<int>(err.status), ", ",
                threads_text(), "): ", err.what());
    }
  }

 private:
  int64_t rows(const Dims& a) const {
    int64_t m = 1;
    for (size_t i = 0; i + 1 < a.size(); ++i) m *= a[i];
    return m;
  }
  memory::desc bias_md() const { return memory::desc({1, n_}, DT::f32, {n_, 1}); }
  memory::desc b_user_md() const {
    return memory::desc({k_, n_}, DT::s8, transpose_b_ ? memory::dims{1, k_} : memory::dims{n_, 1});
  }

  dnnl::matmul::primitive_desc make_pd(int64_t m) const {
    memory::desc src({m, k_}, src_dt_, {k_, 1});
    memory::desc wts({k_, n_}, DT::s8, Tag::any);
    memory::desc dst({m, n_}, DT::f32, {n_, 1});
    dnnl::matmul::desc d(src, wts, bias_values_.empty() ? memory::desc() : bias_md(), dst);
    dnnl::matmul::primitive_desc pd(d, attr_, cpu_engine());
    skip_implementations_that_cannot_run(pd);
    skip_int8_implementations_not_exact(pd, "INT8 matrix multiply '" + name_ + "'");
    return pd;
  }

  std::shared_ptr<memory> reorder_b(const memory::desc& md) const {
    return reordered_copy(b_user_md(), b_values_.data(), md);
  }

  std::unique_ptr<Int8MatmulEntry> make_entry(int64_t m) const {
    auto e = std::make_unique<Int8MatmulEntry>();
    auto pd = make_pd(m);
    e->src_md = pd.src_desc();
    e->dst_md = pd.dst_desc();
    e->a_md = memory::desc({m, k_}, DT::f32, {k_, 1});
    const memory::desc wmd = pd.weights_desc();
    e->weights = wmd == prepared_md_ ? prepared_ : reorder_b(wmd);
    e->scratchpad = memory(pd.scratchpad_desc(), cpu_engine());
    e->quantized = memory(e->src_md, cpu_engine());
    dnnl::primitive_attr q;
    q.set_output_scales(0, {1.0f / a_scale_});
    if (src_zero_point_ != 0) q.set_zero_points(DNNL_ARG_DST, 0, {src_zero_point_});
    e->quantize =
        dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e->a_md, cpu_engine(), e->src_md, q));
    e->prim = dnnl::matmul(pd);
    return e;
  }

  std::string name_;
  int64_t residual_input_ = -1, k_ = 0, n_ = 0;
  bool transpose_b_ = false;
  DT src_dt_ = DT::u8;
  int32_t src_zero_point_ = 0;  // of the stored A (128: a signed A as u8, signed_input_zero_point)
  float a_scale_ = 1.0f;
  std::vector<int8_t> b_values_;
  std::vector<float> bias_values_;
  dnnl::primitive_attr attr_;
  memory::desc prepared_md_;
  std::shared_ptr<memory> prepared_;
};

}  // namespace

void register_onednn_int8_matmul(KernelTable& registry) {
  KernelRow row{"onednn_int8", LayerKind::MatrixMultiply, int8_matmul_applies, [](const LayerInfo& info) {
                  return std::unique_ptr<Kernel>(std::make_unique<Int8MatmulKernel>(info));
                }};
  row.int8 = true;
  registry.add(std::move(row));
}

}  // namespace kiln::engine::cpu::onednn
