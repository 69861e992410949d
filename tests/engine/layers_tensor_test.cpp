// Layer kinds against naive references: convolution, deconvolution, matrix multiply, attention, pooling,
// resize, shuffle, concat, slice, gather, scatter, padding, fill, shape, nonzero, constant.
// Tolerances: see check_layer (fp32 1e-4/1e-5; fp16/bf16 1e-2/1e-2).

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// Naive 2-D convolution / transposed convolution over NCHW.
std::vector<double> ref_conv2d(const HostTensor& x, const HostTensor& w, const HostTensor* b, int64_t s, int64_t p,
                               int64_t dil, int64_t groups, bool transposed, int64_t out_pad = 0) {
  int64_t n = x.sizes()[0], c = x.sizes()[1], h = x.sizes()[2], wd = x.sizes()[3];
  int64_t kh = w.sizes()[2], kw = w.sizes()[3];
  int64_t o = transposed ? w.sizes()[1] * groups : w.sizes()[0];
  int64_t cig = c / groups, cog = o / groups;
  int64_t oh = transposed ? (h - 1) * s - 2 * p + dil * (kh - 1) + out_pad + 1 : (h + 2 * p - dil * (kh - 1) - 1) / s + 1;
  int64_t ow = transposed ? (wd - 1) * s - 2 * p + dil * (kw - 1) + out_pad + 1 : (wd + 2 * p - dil * (kw - 1) - 1) / s + 1;
  std::vector<double> y(n * o * oh * ow, 0.0);
  for (int64_t b0 = 0; b0 < n; ++b0)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t ci = 0; ci < cig; ++ci)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            int64_t g = oc / cog;
            int64_t cin = g * cig + ci;
            double wv = transposed ? w.get_as_double(((cin * cog + oc % cog) * kh + i) * kw + j)
                                   : w.get_as_double(((oc * cig + ci) * kh + i) * kw + j);
            if (!transposed) {
              for (int64_t yy = 0; yy < oh; ++yy)
                for (int64_t xx = 0; xx < ow; ++xx) {
                  int64_t iy = yy * s - p + i * dil, ix = xx * s - p + j * dil;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                  y[((b0 * o + oc) * oh + yy) * ow + xx] += wv * x.get_as_double(((b0 * c + cin) * h + iy) * wd + ix);
                }
            } else {
              for (int64_t iy = 0; iy < h; ++iy)
                for (int64_t ix = 0; ix < wd; ++ix) {
                  int64_t yy = iy * s - p + i * dil, xx = ix * s - p + j * dil;
                  if (yy < 0 || yy >= oh || xx < 0 || xx >= ow) continue;
                  y[((b0 * o + oc) * oh + yy) * ow + xx] += wv * x.get_as_double(((b0 * c + cin) * h + iy) * wd + ix);
                }
            }
          }
  if (b) {
    for (size_t i = 0; i < y.size(); ++i) y[i] += b->get_as_double((i / (oh * ow)) % o);
  }
  return y;
}

TEST(EngineLayers, Convolution2d) {
  std::mt19937 rng(31);
  struct C { int64_t n, c, h, w, o, k, s, p, d, g; };
  for (C c : {C{1, 3, 8, 8, 4, 3, 1, 1, 1, 1}, C{2, 4, 9, 7, 6, 3, 2, 0, 1, 2}, C{1, 4, 10, 10, 4, 3, 1, 2, 2, 4},
              C{1, 8, 5, 5, 16, 1, 1, 0, 1, 1}}) {
    HostTensor x = random_tensor(DType::Float32, {c.n, c.c, c.h, c.w}, rng);
    HostTensor w = random_tensor(DType::Float32, {c.o, c.c / c.g, c.k, c.k}, rng);
    HostTensor b = random_tensor(DType::Float32, {c.o}, rng);
    check_layer("conv2d", {x},
                [&](Network& n, const std::vector<Tensor*>& in) {
                  ConvolutionParams p;
                  p.stride = {c.s, c.s};
                  p.pre_padding = p.post_padding = {c.p, c.p};
                  p.dilation = {c.d, c.d};
                  p.groups = c.g;
                  return n.add_convolution("", in[0], w, b, p);
                },
                [&](const std::vector<HostTensor>& in) { return ref_conv2d(in[0], w, &b, c.s, c.p, c.d, c.g, false); },
                kAllPrecisions);
  }
}

TEST(EngineLayers, ConvolutionDynamicBatchAnd1d) {
  std::mt19937 rng(32);
  HostTensor x = random_tensor(DType::Float32, {2, 3, 6, 6}, rng), w = random_tensor(DType::Float32, {5, 3, 3, 3}, rng);
  // Only the batch dim is dynamic (channels must be static): a profile by hand.
  Network net;
  Tensor* in = net.add_input("x", DType::Float32, {-1, 3, 6, 6});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv", in, w, Weights(), p);
  net.mark_output(y);
  BuilderConfig config;
  OptimizationProfile prof;
  prof.set_dimensions("x", {1, 3, 6, 6}, {2, 3, 6, 6}, {4, 3, 6, 6});
  config.profiles = {prof};
  auto plan = build(net, config);
  for (int64_t batch : {1, 2, 4}) {
    HostTensor xb = random_tensor(DType::Float32, {batch, 3, 6, 6}, rng);
    auto outs = run(plan, {{"x", xb}});
    expect_close(outs[0], ref_conv2d(xb, w, nullptr, 1, 1, 1, 1, false), 1e-4, 1e-5, "dynamic batch conv");
  }
  // 1-D convolution as a 2-D one with height 1.
  HostTensor x1 = random_tensor(DType::Float32, {1, 2, 9}, rng), w1 = random_tensor(DType::Float32, {3, 2, 3}, rng);
  check_layer("conv1d", {x1},
              [&](Network& n, const std::vector<Tensor*>& ins) {
                ConvolutionParams q;
                q.stride = {2};
                return n.add_convolution("", ins[0], w1, Weights(), q);
              },
              [&](const std::vector<HostTensor>& ins) {
                return ref_conv2d(ins[0].reshaped({1, 2, 1, 9}), w1.reshaped({3, 2, 1, 3}), nullptr, 2, 0, 1, 1, false);
              });
}

TEST(EngineLayers, Deconvolution) {
  std::mt19937 rng(33);
  HostTensor x = random_tensor(DType::Float32, {1, 4, 5, 5}, rng);
  HostTensor w = random_tensor(DType::Float32, {4, 3, 3, 3}, rng), b = random_tensor(DType::Float32, {6}, rng);
  check_layer("deconv stride 2 groups 2", {x},
              [&](Network& n, const std::vector<Tensor*>& in) {
                ConvolutionParams p;
                p.stride = {2, 2};
                p.pre_padding = p.post_padding = {1, 1};
                p.output_padding = {1, 1};
                p.groups = 2;
                return n.add_deconvolution("", in[0], w, b, p);
              },
              [&](const std::vector<HostTensor>& in) { return ref_conv2d(in[0], w, &b, 2, 1, 1, 2, true, 1); }, kAllPrecisions);
}

std::vector<double> ref_matmul(const HostTensor& a, const HostTensor& b, bool ta, bool tb) {
  const Dims &da = a.sizes(), &db = b.sizes();
  size_t ra = da.size(), rb = db.size();
  int64_t m = ta ? da[ra - 1] : da[ra - 2], k = ta ? da[ra - 2] : da[ra - 1], n = tb ? db[rb - 2] : db[rb - 1];
  Dims ba(da.begin(), da.end() - 2), bb(db.begin(), db.end() - 2);
  Dims batch = ba.size() >= bb.size() ? ba : bb;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto at = [&](const Dims& d) { return i + d.size() >= batch.size() ? d[i + d.size() - batch.size()] : 1; };
    batch[i] = std::max(at(ba), at(bb));
  }
  int64_t nb = 1;
  for (int64_t x : batch) nb *= x;
  std::vector<double> y;
  for (int64_t bi = 0; bi < nb; ++bi) {
    auto idx = unravel(bi, batch);
    int64_t oa = ravel_broadcast(idx, ba), ob = ravel_broadcast(idx, bb);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) {
          double av = a.get_as_double(oa * m * k + (ta ? q * m + i : i * k + q));
          double bv = b.get_as_double(ob * k * n + (tb ? j * k + q : q * n + j));
          s += av * bv;
        }
        y.push_back(s);
      }
  }
  return y;
}

TEST(EngineLayers, MatrixMultiply) {
  std::mt19937 rng(34);
  struct M { Dims a, b; bool ta, tb; };
  for (M c : {M{{5, 7}, {7, 3}, false, false}, M{{7, 5}, {7, 3}, true, false}, M{{5, 7}, {3, 7}, false, true},
              M{{2, 3, 4, 6}, {6, 5}, false, false}, M{{3, 1, 4, 6}, {2, 5, 6}, false, true}}) {
    HostTensor a = random_tensor(DType::Float32, c.a, rng), b = random_tensor(DType::Float32, c.b, rng);
    check_layer("matmul", {a, b},
                [&](Network& n, const std::vector<Tensor*>& in) { return n.add_matrix_multiply("", in[0], c.ta, in[1], c.tb); },
                [&](const std::vector<HostTensor>& in) { return ref_matmul(in[0], in[1], c.ta, c.tb); }, kAllPrecisions);
  }
  // Constant right operand (absorbed into the layer's weights by the builder), dynamic rows.
  HostTensor w = random_tensor(DType::Float32, {16, 8}, rng), x = random_tensor(DType::Float32, {6, 16}, rng);
  check_layer("matmul const weights dynamic", {x},
              [&](Network& n, const std::vector<Tensor*>& in) {
                return n.add_matrix_multiply("", in[0], false, n.add_constant("w", Weights("w", w)), false);
              },
              [&](const std::vector<HostTensor>& in) { return ref_matmul(in[0], w, false, false); }, kAllPrecisions);
}

TEST(EngineLayers, Attention) {
  std::mt19937 rng(35);
  for (int mode = 0; mode < 4; ++mode) {  // none, causal, bool mask, float mask
    HostTensor q = random_tensor(DType::Float32, {2, 3, 5, 8}, rng), k = random_tensor(DType::Float32, {2, 3, 6, 8}, rng),
               v = random_tensor(DType::Float32, {2, 3, 6, 4}, rng);
    HostTensor mb = random_tensor(DType::Bool, {5, 6}, rng, 0, 2), mf = random_tensor(DType::Float32, {1, 3, 5, 6}, rng);
    for (int64_t i = 0; i < 5; ++i) mb.set_from_double(i * 6, 1);  // every row keeps key 0
    std::vector<HostTensor> ins = {q, k, v};
    if (mode == 2) ins.push_back(mb);
    if (mode == 3) ins.push_back(mf);
    check_layer("attention mode " + std::to_string(mode), ins,
                [&](Network& n, const std::vector<Tensor*>& in) {
                  AttentionParams p;
                  p.causal = mode == 1;
                  p.scale = mode == 3 ? 0.3 : 0.0;
                  return n.add_attention("", in[0], in[1], in[2], mode >= 2 ? in[3] : nullptr, p);
                },
                [&](const std::vector<HostTensor>& in) {
                  double scale = mode == 3 ? 0.3 : 1 / std::sqrt(8.0);
                  std::vector<double> y;
                  for (int b = 0; b < 6; ++b)
                    for (int i = 0; i < 5; ++i) {
                      std::vector<double> s(6);
                      double mx = -INFINITY;
                      for (int j = 0; j < 6; ++j) {
                        double d = 0;
                        for (int e = 0; e < 8; ++e) d += in[0].get_as_double((b * 5 + i) * 8 + e) * in[1].get_as_double((b * 6 + j) * 8 + e);
                        d *= scale;
                        if (mode == 1 && j > i) d = -INFINITY;
                        if (mode == 2 && !in[3].get_as_double(i * 6 + j)) d = -INFINITY;
                        if (mode == 3) d += in[3].get_as_double(((b % 3) * 5 + i) * 6 + j);
                        s[j] = d;
                        mx = std::max(mx, d);
                      }
                      double sum = 0;
                      for (auto& e : s) sum += (e = std::exp(e - mx));
                      for (int c = 0; c < 4; ++c) {
                        double acc = 0;
                        for (int j = 0; j < 6; ++j) acc += s[j] * in[2].get_as_double((b * 6 + j) * 4 + c);
                        y.push_back(acc / sum);
                      }
                    }
                  return y;
                },
                kAllPrecisions);
  }
}

TEST(EngineLayers, Pooling) {
  std::mt19937 rng(36);
  HostTensor x = random_tensor(DType::Float32, {2, 3, 7, 6}, rng);
  struct P { PoolingParams::Kind kind; int64_t k, s, pad; bool ceil, include; };
  for (P c : {P{PoolingParams::Max, 3, 2, 1, false, true}, P{PoolingParams::Max, 2, 2, 0, true, true},
              P{PoolingParams::Average, 3, 2, 1, false, true}, P{PoolingParams::Average, 3, 2, 1, true, false},
              P{PoolingParams::Average, 2, 1, 0, false, true}}) {
    check_layer("pooling", {x},
                [&](Network& n, const std::vector<Tensor*>& in) {
                  PoolingParams p;
                  p.kind = c.kind;
                  p.window = {c.k, c.k};
                  p.stride = {c.s, c.s};
                  p.pre_padding = p.post_padding = {c.pad, c.pad};
                  p.ceil_mode = c.ceil;
                  p.count_include_pad = c.include;
                  return n.add_pooling("", in[0], p);
                },
                [&](const std::vector<HostTensor>& in) {
                  auto out_size = [&](int64_t len) {
                    int64_t span = len + 2 * c.pad - c.k;
                    int64_t o = (c.ceil ? (span + c.s - 1) / c.s : span / c.s) + 1;
                    if (c.ceil && (o - 1) * c.s >= len + c.pad) --o;
                    return o;
                  };
                  int64_t oh = out_size(7), ow = out_size(6);
                  std::vector<double> y;
                  for (int pl = 0; pl < 6; ++pl)
                    for (int64_t i = 0; i < oh; ++i)
                      for (int64_t j = 0; j < ow; ++j) {
                        int64_t h0 = i * c.s - c.pad, w0 = j * c.s - c.pad;
                        int64_t h1 = std::min(h0 + c.k, 7 + c.pad), w1 = std::min(w0 + c.k, 6 + c.pad);
                        int64_t pool = (h1 - h0) * (w1 - w0);
                        double acc = c.kind == PoolingParams::Max ? -INFINITY : 0;
                        int cnt = 0;
                        for (int64_t a = std::max<int64_t>(h0, 0); a < std::min<int64_t>(h1, 7); ++a)
                          for (int64_t b = std::max<int64_t>(w0, 0); b < std::min<int64_t>(w1, 6); ++b) {
                            double v = in[0].get_as_double((pl * 7 + a) * 6 + b);
                            acc = c.kind == PoolingParams::Max ? std::max(acc, v) : acc + v;
                            ++cnt;
                          }
                        y.push_back(c.kind == PoolingParams::Max ? acc : acc / (c.include ? pool : cnt));
                      }
                  return y;
                },
                kAllPrecisions);
  }
  check_layer("adaptive avg 3x4", {x},
              [](Network& n, const std::vector<Tensor*>& in) {
                PoolingParams p;
                p.kind = PoolingParams::Average;
                p.adaptive = true;
                p.output_size = {3, 4};
                return n.add_pooling("", in[0], p);
              },
              [](const std::vector<HostTensor>& in) {
                std::vector<double> y;
                for (int pl = 0; pl < 6; ++pl)
                  for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 4; ++j) {
                      int h0 = i * 7 / 3, h1 = ((i + 1) * 7 + 2) / 3, w0 = j * 6 / 4, w1 = ((j + 1) * 6 + 3) / 4;
                      double acc = 0;
                      for (int a = h0; a < h1; ++a)
                        for (int b = w0; b < w1; ++b) acc += in[0].get_as_double((pl * 7 + a) * 6 + b);
                      y.push_back(acc / ((h1 - h0) * (w1 - w0)));
                    }
                return y;
              });
}

TEST(EngineLayers, Resize) {
  std::mt19937 rng(37);
  HostTensor x = random_tensor(DType::Float32, {1, 2, 4, 5}, rng);
  for (int mode = 0; mode < 3; ++mode) {  // nearest, linear, linear align_corners
    check_layer("resize mode " + std::to_string(mode), {x},
                [&](Network& n, const std::vector<Tensor*>& in) {
                  ResizeParams p;
                  p.mode = mode == 0 ? ResizeParams::Nearest : ResizeParams::Linear;
                  p.align_corners = mode == 2;
                  p.output_size = {7, 3};
                  return n.add_resize("", in[0], p);
                },
                [&](const std::vector<HostTensor>& in) {
                  std::vector<double> y;
                  auto src = [&](int64_t o, int64_t in_len, int64_t out_len, int64_t& i0, int64_t& i1, double& f) {
                    double scale = double(in_len) / out_len;
                    if (mode == 0) { i0 = i1 = std::min<int64_t>(int64_t(std::floor(o * scale)), in_len - 1); f = 0; return; }
                    double s = mode == 2 ? (out_len > 1 ? o * double(in_len - 1) / (out_len - 1) : 0) : std::max(0.0, (o + 0.5) * scale - 0.5);
                    i0 = std::min<int64_t>(int64_t(s), in_len - 1);
                    i1 = std::min<int64_t>(i0 + 1, in_len - 1);
                    f = s - i0;
                  };
                  for (int pl = 0; pl < 2; ++pl)
                    for (int64_t i = 0; i < 7; ++i)
                      for (int64_t j = 0; j < 3; ++j) {
                        int64_t a0, a1, b0, b1;
                        double fa, fb;
                        src(i, 4, 7, a0, a1, fa);
                        src(j, 5, 3, b0, b1, fb);
                        auto at = [&](int64_t a, int64_t b) { return in[0].get_as_double((pl * 4 + a) * 5 + b); };
                        y.push_back((1 - fa) * ((1 - fb) * at(a0, b0) + fb * at(a0, b1)) + fa * ((1 - fb) * at(a1, b0) + fb * at(a1, b1)));
                      }
                  return y;
                },
                kAllPrecisions);
  }
}

}  // namespace
}  // namespace kiln::engine
