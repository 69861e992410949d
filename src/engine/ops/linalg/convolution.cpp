// Convolution layers (params: kiln/engine/ops/linalg/convolution.h): shape inference and the reference
// kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/linalg/post_ops.h"
#include "engine/ops/shape_util.h"
#include "kiln/support/checked_math.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Convolution>(const Layer& layer, const std::vector<ShapeIn>& in) {
  ConvolutionParams p = layer.get<ConvolutionParams>();
  KILN_CHECK(!in.empty(), InvalidInput, "convolution needs an input");
  check_float(in[0], "input 0");
  KILN_CHECK(!layer.weights.empty() && layer.weights[0].defined(), InvalidInput,
             "convolution needs kernel weights");
  const HostTensor& w = layer.weights[0].value;
  KILN_CHECK(w.dim() >= 3 && w.dim() <= 5, InvalidInput, "kernel weights must have rank 3-5, got ", w.dim());
  size_t ns = static_cast<size_t>(w.dim() - 2);
  const Dims& x = in[0].dims;
  KILN_CHECK(x.size() == ns + 2, InvalidInput, "input 0 rank ", x.size(), " does not match a ", ns,
             "-D kernel (expected rank ", ns + 2, ")");
  fill_default(p.stride, ns, 1, "stride");
  fill_default(p.pre_padding, ns, 0, "pre_padding");
  fill_default(p.post_padding, ns, 0, "post_padding");
  fill_default(p.dilation, ns, 1, "dilation");
  fill_default(p.output_padding, ns, 0, "output_padding");
  KILN_CHECK(p.groups >= 1, InvalidInput, "groups must be >= 1, got ", p.groups);
  for (size_t i = 0; i < ns; ++i) {
    KILN_CHECK(p.stride[i] >= 1 && p.dilation[i] >= 1 && p.pre_padding[i] >= 0 && p.post_padding[i] >= 0 &&
                   p.output_padding[i] >= 0,
               InvalidInput, "bad stride/dilation/padding in spatial dim ", i);
  }
  int64_t out_c;
  int64_t in_c_per_group;
  if (!p.transposed) {
    out_c = w.sizes()[0];
    in_c_per_group = w.sizes()[1];
    KILN_CHECK(out_c % p.groups == 0, InvalidInput, "output channels ", out_c, " not divisible by groups ",
               p.groups);
  } else {
    KILN_CHECK(w.sizes()[0] % p.groups == 0, InvalidInput, "input channels not divisible by groups");
    out_c = checked_mul(w.sizes()[1], p.groups, "deconvolution output channels");
    in_c_per_group = w.sizes()[0] / p.groups;
  }
  const int64_t in_c = checked_mul(in_c_per_group, p.groups, "convolution input channels");
  KILN_CHECK(x[1] < 0 || x[1] == in_c, InvalidInput, "input 0 has ", x[1],
             " channels but the kernel expects ", in_c);
  if (layer.weights.size() > 1 && layer.weights[1].defined()) {
    KILN_CHECK(layer.weights[1].value.numel() == out_c, InvalidInput, "bias has ",
               layer.weights[1].value.numel(), " elements, expected ", out_c);
  }
  Dims out = {x[0], out_c};
  std::vector<int64_t> k(w.sizes().begin() + 2, w.sizes().end());
  if (!p.transposed) {
    Dims sp(x.begin() + 2, x.end());
    Dims o = conv_like_out(sp, k, p.stride, p.pre_padding, p.post_padding, p.dilation, false);
    out.insert(out.end(), o.begin(), o.end());
  } else {
    for (size_t i = 0; i < ns; ++i) {
      int64_t xi = x[2 + i];
      if (xi < 0) {
        out.push_back(kUnknown);
        continue;
      }
      const char* what = "a deconvolution's output size";
      int64_t o = checked_mul(checked_sub(xi, 1, what), p.stride[i], what);
      o = checked_sub(checked_sub(o, p.pre_padding[i], what), p.post_padding[i], what);
      o = checked_add(o, checked_mul(p.dilation[i], checked_sub(k[i], 1, what), what), what);
      o = checked_add(checked_add(o, p.output_padding[i], what), 1, what);
      KILN_CHECK(o > 0, InvalidInput, "deconvolution output size ", o, " <= 0 in spatial dim ", i);
      out.push_back(o);
    }
  }
  check_post_ops(layer, p.post_ops, in, out, in[0].dtype);
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Convolution>(const Layer& layer, KernelArgs& args) {
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
  finish_linalg(layer, p.post_ops, args, acc, [&](int64_t i) { return (i / ysp) % c_out; });
}

}  // namespace kiln::engine::ops
