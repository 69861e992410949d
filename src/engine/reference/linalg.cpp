// Reference kernels: convolution / transposed convolution, matrix multiply (with bias and post-ops),
// fused attention.

#include <cmath>
#include <limits>

#include "engine/reference/attention_layout.h"
#include "engine/reference/common.h"
#include "engine/reference/reference.h"
#include "engine/reference/scalar_ops.h"
#include "engine/reference/shape_inference.h"

namespace kiln::engine::ref {
namespace {

/// Applies bias (per `channel_of(i)`) and post-ops to a float result, then stores it.
void finish(const Layer& layer, const std::vector<PostOp>& post_ops, KernelArgs& args, std::vector<float>& acc,
            const std::function<int64_t(int64_t)>& channel_of) {
  const Weights* bias = layer.weights.size() > 1 && layer.weights[1].defined() ? &layer.weights[1] : nullptr;
  if (bias) {
    std::vector<float> b = host_floats(bias->value);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += b[channel_of(static_cast<int64_t>(i))];
  }
  int64_t next = first_residual_input(layer);
  for (const PostOp& op : post_ops) {
    if (op.kind == PostOp::Sum) {
      std::vector<float> r = load_floats(args.inputs[next++]);
      for (size_t i = 0; i < acc.size(); ++i) acc[i] += static_cast<float>(op.scale) * r[i];
    } else {
      for (float& v : acc) v = static_cast<float>(apply_activation(op.activation, v));
    }
  }
  store_floats(args.outputs[0], acc);
}

void convolution(const Layer& layer, KernelArgs& args) {
  ConvolutionParams p = layer.get<ConvolutionParams>();
  const TensorView& x = args.inputs[0];
  const TensorView& y = args.outputs[0];
  const HostTensor& w = layer.weights[0].value;
  size_t ns = static_cast<size_t>(w.dim() - 2);
  auto pad3 = [&](std::vector<int64_t> v, int64_t fill) {
    if (v.empty()) v.assign(ns, fill);
    while (v.size() < 3) v.insert(v.begin(), fill);
    return v;
  };
  std::vector<int64_t> xs(3, 1), ys(3, 1), ks(3, 1);
  for (size_t i = 0; i < ns; ++i) {
    xs[3 - ns + i] = x.dims[2 + i];
    ys[3 - ns + i] = y.dims[2 + i];
    ks[3 - ns + i] = w.sizes()[2 + i];
  }
  auto st = pad3(p.stride, 1), pd = pad3(p.pre_padding, 0), dl = pad3(p.dilation, 1);
  int64_t n_batch = x.dims[0], c_in = x.dims[1], c_out = y.dims[1], g = p.groups;
  int64_t cig = c_in / g, cog = c_out / g;
  std::vector<float> xf = load_floats(x), wf = host_floats(w);
  int64_t xsp = xs[0] * xs[1] * xs[2], ysp = ys[0] * ys[1] * ys[2], ksp = ks[0] * ks[1] * ks[2];
  std::vector<float> acc(static_cast<size_t>(n_batch * c_out * ysp), 0.0f);
  if (!p.transposed) {
    parallel(args.pool, n_batch * c_out, 1, [&](int64_t b, int64_t e) {
      for (int64_t no = b; no < e; ++no) {
        int64_t n = no / c_out, o = no % c_out, grp = o / cog;
        float* out = &acc[no * ysp];
        for (int64_t c = 0; c < cig; ++c) {
          const float* xin = &xf[(n * c_in + grp * cig + c) * xsp];
          const float* wk = &wf[(o * cig + c) * ksp];
          for (int64_t kd = 0; kd < ks[0]; ++kd)
            for (int64_t kh = 0; kh < ks[1]; ++kh)
              for (int64_t kw = 0; kw < ks[2]; ++kw) {
                float wv = wk[(kd * ks[1] + kh) * ks[2] + kw];
                for (int64_t od = 0; od < ys[0]; ++od) {
                  int64_t id = od * st[0] - pd[0] + kd * dl[0];
                  if (id < 0 || id >= xs[0]) continue;
                  for (int64_t oh = 0; oh < ys[1]; ++oh) {
                    int64_t ih = oh * st[1] - pd[1] + kh * dl[1];
                    if (ih < 0 || ih >= xs[1]) continue;
                    const float* xrow = xin + (id * xs[1] + ih) * xs[2];
                    float* orow = out + (od * ys[1] + oh) * ys[2];
                    for (int64_t ow = 0; ow < ys[2]; ++ow) {
                      int64_t iw = ow * st[2] - pd[2] + kw * dl[2];
                      if (iw >= 0 && iw < xs[2]) orow[ow] += wv * xrow[iw];
                    }
                  }
                }
              }
        }
      }
    });
  } else {
    parallel(args.pool, n_batch * c_out, 1, [&](int64_t b, int64_t e) {
      for (int64_t no = b; no < e; ++no) {
        int64_t n = no / c_out, o = no % c_out, grp = o / cog, oo = o % cog;
        float* out = &acc[no * ysp];
        for (int64_t c = 0; c < cig; ++c) {
          int64_t ci = grp * cig + c;
          const float* xin = &xf[(n * c_in + ci) * xsp];
          const float* wk = &wf[(ci * cog + oo) * ksp];
          for (int64_t id = 0; id < xs[0]; ++id)
            for (int64_t ih = 0; ih < xs[1]; ++ih)
              for (int64_t iw = 0; iw < xs[2]; ++iw) {
                float xv = xin[(id * xs[1] + ih) * xs[2] + iw];
                for (int64_t kd = 0; kd < ks[0]; ++kd) {
                  int64_t od = id * st[0] - pd[0] + kd * dl[0];
                  if (od < 0 || od >= ys[0]) continue;
                  for (int64_t kh = 0; kh < ks[1]; ++kh) {
                    int64_t oh = ih * st[1] - pd[1] + kh * dl[1];
                    if (oh < 0 || oh >= ys[1]) continue;
                    for (int64_t kw = 0; kw < ks[2]; ++kw) {
                      int64_t ow = iw * st[2] - pd[2] + kw * dl[2];
                      if (ow >= 0 && ow < ys[2])
                        out[(od * ys[1] + oh) * ys[2] + ow] += xv * wk[(kd * ks[1] + kh) * ks[2] + kw];
                    }
                  }
                }
              }
        }
      }
    });
  }
  finish(layer, p.post_ops, args, acc, [&](int64_t i) { return (i / ysp) % c_out; });
}

void matmul(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<MatrixMultiplyParams>();
  bool b_weight = !layer.weights.empty() && layer.weights[0].defined();
  const TensorView& a = args.inputs[0];
  TensorView b = b_weight ? TensorView{const_cast<uint8_t*>(layer.weights[0].value.data()),
                                       layer.weights[0].value.dtype(), layer.weights[0].value.sizes()}
                          : args.inputs[1];
  const TensorView& y = args.outputs[0];
  size_t ra = a.dims.size(), ry = y.dims.size();
  int64_t m = y.dims[ry - 2], n = y.dims[ry - 1];
  int64_t k = p.transpose_a ? a.dims[ra - 2] : a.dims[ra - 1];
  Dims batch(y.dims.begin(), y.dims.end() - 2);
  auto boff_a = broadcast_offsets(Dims(a.dims.begin(), a.dims.end() - 2), batch);
  auto boff_b = broadcast_offsets(Dims(b.dims.begin(), b.dims.end() - 2), batch);
  std::vector<float> af = load_floats(a), bf = load_floats(b);
  if (p.transpose_b) {  // make B [.., K, N] so the inner loop streams rows
    std::vector<float> t(bf.size());
    int64_t mats = static_cast<int64_t>(bf.size()) / std::max<int64_t>(k * n, 1);
    for (int64_t q = 0; q < mats; ++q)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk) t[q * k * n + kk * n + j] = bf[q * k * n + j * k + kk];
    bf.swap(t);
  }
  int64_t nb = checked_numel(batch);
  std::vector<float> acc(static_cast<size_t>(nb * m * n), 0.0f);
  parallel(args.pool, nb * m, 4, [&](int64_t s, int64_t e) {
    for (int64_t bi = s; bi < e; ++bi) {
      int64_t bt = bi / m, i = bi % m;
      const float* A = &af[boff_a[bt] * m * k];
      const float* B = &bf[boff_b[bt] * k * n];
      float* Y = &acc[(bt * m + i) * n];
      for (int64_t kk = 0; kk < k; ++kk) {
        float av = p.transpose_a ? A[kk * m + i] : A[i * k + kk];
        const float* brow = B + kk * n;
        for (int64_t j = 0; j < n; ++j) Y[j] += av * brow[j];
      }
    }
  });
  finish(layer, p.post_ops, args, acc, [&](int64_t i) { return i % n; });
}

void attention(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<AttentionParams>();
  // Logical operands (attention_layout.h): dense tensors or strided views of the layer's buffers.
  AttentionOperand ops[4];
  AttentionRows rows[4];
  for (int i = 0; i < 4; ++i) {
    ops[i] = attention_operand(p, i, i < 3 ? args.inputs[i].dims : args.outputs[0].dims);
    rows[i] = attention_rows(ops[i]);
  }
  const TensorView &q = args.inputs[0], &kt = args.inputs[1], &v = args.inputs[2], &y = args.outputs[0];
  const Dims& qd = ops[0].dims;
  size_t r = qd.size();
  int64_t lq = qd[r - 2], e = qd[r - 1], lk = ops[1].dims[r - 2], ev = ops[2].dims[r - 1];
  int64_t nb = checked_numel(Dims(qd.begin(), qd.end() - 2));
  double scale = p.scale > 0 ? p.scale : 1.0 / std::sqrt(static_cast<double>(e));
  // Element (b, row, col) of operand i; columns have stride 1 only in views, so use the real column stride.
  auto at = [&](int i, int64_t b, int64_t row, int64_t col) {
    return rows[i].start(b) + row * rows[i].row + col * ops[i].strides[r - 1];
  };
  std::vector<int64_t> moff;
  const TensorView* mask = p.has_mask ? &args.inputs[3] : nullptr;
  if (mask) {
    Dims sd(qd.begin(), qd.end() - 1);
    sd.push_back(lk);
    moff = broadcast_offsets(mask->dims, sd);
  }
  parallel(args.pool, nb * lq, 1, [&](int64_t s, int64_t end) {
    std::vector<double> sc(static_cast<size_t>(lk));
    for (int64_t bi = s; bi < end; ++bi) {
      int64_t b = bi / lq, i = bi % lq;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < lk; ++j) {
        double d = 0;
        for (int64_t c = 0; c < e; ++c) d += load(q, at(0, b, i, c)) * load(kt, at(1, b, j, c));
        d *= scale;
        if (p.causal && j > i) d = -std::numeric_limits<double>::infinity();
        if (mask) {
          double mv = load(*mask, moff[bi * lk + j]);
          if (mask->dtype == DType::Bool) {
            if (mv == 0) d = -std::numeric_limits<double>::infinity();
          } else {
            d += mv;
          }
        }
        sc[j] = d;
        mx = std::max(mx, d);
      }
      double sum = 0;
      for (int64_t j = 0; j < lk; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
      for (int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j) acc += sc[j] * load(v, at(2, b, j, c));
        store(y, at(3, b, i, c), acc / sum);
      }
    }
  });
}

}  // namespace

void execute_linalg(const Layer& layer, KernelArgs& args) {
  switch (layer.kind) {
    case LayerKind::Convolution: convolution(layer, args); return;
    case LayerKind::MatrixMultiply: matmul(layer, args); return;
    case LayerKind::Attention: attention(layer, args); return;
    default: KILN_FAIL(Internal, "execute_linalg: wrong kind ", layer_kind_name(layer.kind));
  }
}

}  // namespace kiln::engine::ref
