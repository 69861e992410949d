// oneDNN matrix multiply (batched with broadcasting, transposes through strides) with fused bias, eltwise
// post-ops and a residual sum. A constant right operand is prepared once in the primitive's preferred
// (blocked) layout; when it is a single matrix and A is not transposed, A's batch dims fold into M so the
// whole product is one GEMM. Primitives are cached per input shape in the per-context state.

#include <cstring>
#include <map>
#include <memory>

#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/onednn/register.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

using dnnl::memory;
using DT = memory::data_type;
using Tag = memory::format_tag;

struct MatmulEntry {
  dnnl::matmul prim;
  memory::desc src_md, wts_md, dst_md;
  std::shared_ptr<memory> weights;  // prepared constant weights (constant B only)
  memory scratchpad;                // this entry's own (user-mode) scratchpad
};

struct MatmulState : KernelState {
  std::map<std::pair<Dims, Dims>, std::unique_ptr<MatmulEntry>> entries;
  dnnl::stream stream{cpu_engine()};
};

/// The logical oneDNN desc of an operand with memory dims `dims` (dense), transposed in its last two dims
/// when `transpose`, left-padded with unit dims to `rank`.
memory::desc operand_md(const Dims& dims, bool transpose, size_t rank) {
  memory::dims d = to_dnnl_dims(dims), s = dense_strides(d);
  size_t r = d.size();
  if (transpose) {
    std::swap(d[r - 1], d[r - 2]);
    std::swap(s[r - 1], s[r - 2]);
  }
  int64_t total = 1;
  for (int64_t v : dims) total *= v;
  while (d.size() < rank) {
    d.insert(d.begin(), 1);
    s.insert(s.begin(), total);
  }
  return memory::desc(d, DT::f32, s);
}

class MatmulKernel : public Kernel {
 public:
  explicit MatmulKernel(const LayerInfo& info) {
    const Layer& layer = *info.layer;
    p_ = layer.get<MatrixMultiplyParams>();
    b_const_ = !layer.weights.empty() && layer.weights[0].defined();
    residual_input_ = count_sum_post_ops(p_.post_ops) > 0 ? first_residual_input(layer) : -1;
    attr_ = make_attr(p_.post_ops);
    if (b_const_) {
      const HostTensor& b = layer.weights[0].value;
      b_dims_ = b.sizes();
      b_values_ = weights_as_floats(b);
      int64_t b_batch = 1;
      for (size_t i = 0; i + 2 < b_dims_.size(); ++i) b_batch *= b_dims_[i];
      fold_ = b_batch == 1 && !p_.transpose_a;
    }
    if (layer.weights.size() > 1 && layer.weights[1].defined()) {
      bias_values_ = weights_as_floats(layer.weights[1].value);
    }
    // The opt shape's primitive, for which a constant B is prepared.
    const Shapes sh =
        shapes(info.inputs[0].opt, b_const_ ? b_dims_ : info.inputs[1].opt, info.outputs[0].opt);
    dnnl::matmul::primitive_desc pd;
    try {
      pd = make_pd(sh, b_const_);
    } catch (const dnnl::error& e) {
      KILN_FAIL(Unsupported, "matrix multiply '", layer.name,
                "': oneDNN has no primitive for it: ", e.what());
    }
    require_optimized(info, pd, "matrix multiply '" + layer.name + "'");
    if (b_const_) {
      prepared_md_ = pd.weights_desc();
      prepared_ = reorder_b(sh.wts, prepared_md_);
    }
  }

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<MatmulState>(); }

  void execute(KernelArgs& args) const override {
    auto* state = static_cast<MatmulState*>(args.state);
    KILN_CHECK(state != nullptr, Internal, "oneDNN matrix multiply executed without its state");
    const TensorView& a = args.inputs[0];
    const TensorView& y = args.outputs[0];
    const TensorView* b = b_const_ ? nullptr : &args.inputs[1];
    auto key = std::make_pair(a.dims, b ? b->dims : Dims{});
    // Before creating the primitive (see convolution.cpp): y's elements times the shared dim K.
    const size_t k_from_end = p_.transpose_a && a.dims.size() >= 2 ? 2 : 1;
    const int64_t k = a.dims.empty() ? 1 : a.dims[a.dims.size() - k_from_end];
    const double b_bytes = static_cast<double>(b ? b->nbytes() : b_values_.size() * sizeof(float));
    use_threads(threads_for_work(args.pool, static_cast<double>(y.numel()) * static_cast<double>(k),
                                 static_cast<double>(a.nbytes() + y.nbytes()) + b_bytes));
    auto& slot = state->entries[key];
    if (!slot) slot = make_entry(a.dims, b ? b->dims : b_dims_, y.dims);
    MatmulEntry& e = *slot;
    if (residual_input_ >= 0) {
      const TensorView& r = args.inputs[residual_input_];
      if (r.data != y.data) std::memcpy(y.data, r.data, y.nbytes());
    }
    std::unordered_map<int, memory> margs{{DNNL_ARG_SRC, memory(e.src_md, cpu_engine(), a.data)},
                                          {DNNL_ARG_DST, memory(e.dst_md, cpu_engine(), y.data)},
                                          {DNNL_ARG_SCRATCHPAD, e.scratchpad}};
    if (b_const_) {
      margs.emplace(DNNL_ARG_WEIGHTS, *e.weights);
    } else {
      margs.emplace(DNNL_ARG_WEIGHTS, memory(e.wts_md, cpu_engine(), b->data));
    }
    if (!bias_values_.empty()) {
      margs.emplace(DNNL_ARG_BIAS, memory(bias_md(e.dst_md.dims().size()), cpu_engine(),
                                          const_cast<float*>(bias_values_.data())));
    }
    e.prim.execute(state->stream, margs);
    state->stream.wait();
  }

 private:
  struct Shapes {
    memory::desc src, wts, dst;
  };

  memory::desc bias_md(size_t rank) const {
    memory::dims d(rank, 1);
    d.back() = static_cast<int64_t>(bias_values_.size());
    return memory::desc(d, DT::f32, dense_strides(d));
  }

  Shapes shapes(const Dims& a, const Dims& b, const Dims& y) const {
    Shapes s;
    if (fold_) {
      int64_t k = a.back(), n = y.back();
      int64_t rows = 1;
      for (size_t i = 0; i + 1 < a.size(); ++i) rows *= a[i];
      s.src = memory::desc({rows, k}, DT::f32, {k, 1});
      s.wts = operand_md(b, p_.transpose_b, 2);
      s.dst = memory::desc({rows, n}, DT::f32, {n, 1});
      return s;
    }
    size_t rank = y.size();
    s.src = operand_md(a, p_.transpose_a, rank);
    s.wts = operand_md(b, p_.transpose_b, rank);
    s.dst = operand_md(y, false, rank);
    return s;
  }

  dnnl::matmul::primitive_desc make_pd(const Shapes& sh, bool any_weights) const {
    memory::desc wts = any_weights ? memory::desc(sh.wts.dims(), DT::f32, Tag::any) : sh.wts;
    memory::desc bias = bias_values_.empty() ? memory::desc() : bias_md(sh.dst.dims().size());
    dnnl::matmul::desc d(sh.src, wts, bias, sh.dst);
    dnnl::matmul::primitive_desc pd(d, attr_, cpu_engine());
    skip_implementations_that_cannot_run(pd);
    return pd;
  }

  std::shared_ptr<memory> reorder_b(const memory::desc& user_md, const memory::desc& md) const {
    return reordered_copy(user_md, b_values_.data(), md);
  }

  std::unique_ptr<MatmulEntry> make_entry(const Dims& a, const Dims& b, const Dims& y) const {
    auto e = std::make_unique<MatmulEntry>();
    Shapes sh = shapes(a, b, y);
    auto pd = make_pd(sh, b_const_);
    e->src_md = sh.src;
    e->dst_md = sh.dst;
    e->wts_md = pd.weights_desc();
    if (b_const_) e->weights = e->wts_md == prepared_md_ ? prepared_ : reorder_b(sh.wts, e->wts_md);
    e->scratchpad = memory(pd.scratchpad_desc(), cpu_engine());
    e->prim = dnnl::matmul(pd);
    return e;
  }

  MatrixMultiplyParams p_;
  bool b_const_ = false;
  bool fold_ = false;
  int64_t residual_input_ = -1;
  Dims b_dims_;
  std::vector<float> b_values_, bias_values_;
  memory::desc prepared_md_;
  std::shared_ptr<memory> prepared_;
  dnnl::primitive_attr attr_;
};

bool matmul_applies(const LayerInfo& info, std::string* why) {
  const Layer& layer = *info.layer;
  const auto& p = layer.get<MatrixMultiplyParams>();
  bool b_const = !layer.weights.empty() && layer.weights[0].defined();
  if (!onednn_dtype_ok(info.inputs[0].dtype, why) || !onednn_dtype_ok(info.outputs[0].dtype, why)) {
    return false;
  }
  if (b_const && !is_floating(layer.weights[0].value.dtype())) return refuse(why, "an integer constant B");
  if (!b_const && !onednn_dtype_ok(info.inputs[1].dtype, why)) return false;
  size_t rank = info.outputs[0].opt.size();
  if (rank < 2 || rank > DNNL_MAX_NDIMS) {
    return refuse(
        why, "rank " + std::to_string(rank) + " (onednn takes 2 to " + std::to_string(DNNL_MAX_NDIMS) + ")");
  }
  return matmul_post_ops_fit(info, p.post_ops, why);
}

}  // namespace

void register_onednn_matmul(KernelTable& registry) {
  registry.add(KernelRow{"onednn", LayerKind::MatrixMultiply, matmul_applies, [](const LayerInfo& info) {
                           return std::unique_ptr<Kernel>(std::make_unique<MatmulKernel>(info));
                         }});
}

}  // namespace kiln::engine::cpu::onednn
