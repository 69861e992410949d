// Attention through strided views (AttentionView, the attention-view pass of attention_views.cpp), on
// $KILN_TEST_BACKEND (cpu by default; the gpu ctest runs it on cuda, where fp16/bf16 take the flash tactic
// when the views keep rows 16-byte aligned and the generic one otherwise):
//   - layers whose q/k/v/output views are given directly, against a double reference over the logical values;
//   - the BERT, ViT and GPT-2 chains around attention (B=2, S/L=5, H=3, D=8) built with the pass and without:
//     the bypassed shuffles/gathers/slices are gone, the params carry the views, the numbers agree; BERT's three
//     q/k/v projections become one matmul the views read at column offsets (fuse_projections.cpp);
//   - chains the pass must leave alone (dynamic dims, a chain that does not compose, a head dim that is not
//     contiguous) and a bypassed tensor that is also a network output: all still correct.
// Tolerances: fp32 1e-4 relative + 1e-5 absolute (float sums in another order than the double reference);
// fp16/bf16 1e-2 + 1e-2 (values of order 1, a few roundings to 8-11 bits).

#include <cmath>
#include <limits>

#include "engine/attention_reference.h"
#include "engine/core/plan_impl.h"
#include "engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// A ViT-style in_proj buffer [L, B, 3E] read as q/k/v [B, H, L, D] (E = H*D) at offsets 0, E, 2E, plus
/// `shift` elements (to break 16-byte alignment), written [L, B, H, D] through an output view.
void check_vit_like_views(const std::string& what, int64_t shift, bool causal) {
  constexpr int64_t kB = 2, kL = 5, kH = 3, kD = 8, kE = kH * kD;
  std::mt19937 rng(811);
  HostTensor x = random_tensor(DType::Float32, {kL, kB, 3 * kE + shift}, rng);
  const int64_t row = 3 * kE + shift;
  AttentionParams p;
  p.causal = causal;
  for (int i = 0; i < 3; ++i)
    p.view(i) = strided_view({kB, kH, kL, kD}, {row, kD, kB * row, 1}, i * kE + shift);
  p.out_view = strided_view({kB, kH, kL, kD}, {kH * kD, kD, kB * kH * kD, 1}, 0);
  p.out_dims = {kL, kB, kH, kD};
  check_layer(
      what, {x},
      [&](Network& net, const std::vector<Tensor*>& in) {
        return net.add_attention("attention", in[0], in[0], in[0], nullptr, p);
      },
      [&](const std::vector<HostTensor>& in) {
        return attention_reference({in[0], in[0], in[0]}, p);
      },
      kAllPrecisions);
}

TEST(EngineAttentionViews, StridedOperandsAndOutput) { check_vit_like_views("views over in_proj", 0, false); }

TEST(EngineAttentionViews, StridedOperandsCausal) { check_vit_like_views("views, causal", 0, true); }

TEST(EngineAttentionViews, UnalignedViewsStillCorrect) {
  // Offsets and strides not multiples of 8 elements: no 16-byte rows (cuda: the generic tactic).
  check_vit_like_views("unaligned views", 1, false);
}

TEST(EngineAttentionViews, ViewsWithDenseOperandsAndMask) {
  // q through a view, k and v dense, a Bool mask [B, 1, Lq, Lk] (dense, broadcast over heads).
  constexpr int64_t kB = 2, kS = 5, kH = 3, kD = 8;
  std::mt19937 rng(812);
  HostTensor xq = random_tensor(DType::Float32, {kB, kS, kH * kD}, rng);
  HostTensor k = random_tensor(DType::Float32, {kB, kH, kS, kD}, rng);
  HostTensor v = random_tensor(DType::Float32, {kB, kH, kS, kD}, rng);
  HostTensor m(DType::Bool, {kB, 1, kS, kS});
  for (int64_t i = 0; i < m.numel(); ++i) m.set_from_double(i, (i % 7 == 3) ? 0.0 : 1.0);  // never a full row
  AttentionParams p;
  p.has_mask = true;
  p.q_view = strided_view({kB, kH, kS, kD}, {kS * kH * kD, kD, kH * kD, 1}, 0);
  check_layer(
      "q view, dense k/v, bool mask", {xq, k, v, m},
      [&](Network& net, const std::vector<Tensor*>& in) {
        return net.add_attention("attention", in[0], in[1], in[2], in[3], p);
      },
      [&](const std::vector<HostTensor>& in) { return attention_reference(in, p); }, kAllPrecisions);
}

TEST(EngineAttentionViews, InvalidViewsAreRejected) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 5, 24});
  AttentionParams p;
  p.q_view = strided_view({2, 3, 5, 8}, {120, 8, 24, 2}, 0);  // head dim not contiguous
  EXPECT_THROW(net.add_attention("a", x, x, x, nullptr, p), Error);
  p.q_view = strided_view({2, 3, 5, 8}, {120, 8, 24, 1}, 1);  // one element past the end
  EXPECT_THROW(net.add_attention("b", x, x, x, nullptr, p), Error);
  p.q_view = strided_view({2, 3, 5, 8}, {120, 8, 24, 1}, 0);
  p.out_view = strided_view({2, 3, 5, 8}, {120, 8, 8, 1}, 0);  // not a permutation: rows overlap
  p.out_dims = {2, 5, 3, 8};
  EXPECT_THROW(net.add_attention("c", x, x, x, nullptr, p), Error);
}

// ---- The pass on real chains ----

constexpr int64_t kB = 2, kS = 5, kH = 3, kD = 8, kE = kH * kD;

int count_in_plan(const Plan& plan, LayerKind kind) {
  int n = 0;
  for (const auto& pl : plan.impl().layers) n += pl.layer.kind == kind;
  return n;
}

/// The Shuffle layers that permute (copies; pure reshapes are free views).
int count_permutes(const Plan& plan) {
  int n = 0;
  for (const auto& pl : plan.impl().layers) {
    if (pl.layer.kind != LayerKind::Shuffle) continue;
    const auto& p = pl.layer.get<ShuffleParams>();
    n += !p.first_perm.empty() || !p.second_perm.empty();
  }
  return n;
}

const AttentionParams& attention_params(const Plan& plan) {
  for (const auto& pl : plan.impl().layers) {
    if (pl.layer.kind == LayerKind::Attention) return pl.layer.get<AttentionParams>();
  }
  throw std::runtime_error("no attention layer");
}

using NetFn = std::function<void(Network&, bool dynamic)>;

/// Builds `make` with the pass and without on $KILN_TEST_BACKEND at `precision`, runs both on `inputs`;
/// returns the plans (null when the backend is unavailable) and expects equal outputs within the precision's
/// tolerance.
std::pair<std::shared_ptr<Plan>, std::shared_ptr<Plan>> build_both(
    const NetFn& make, const std::map<std::string, HostTensor>& inputs, TestPrecision precision,
    bool dynamic = false) {
  std::string why;
  if (test_backend() != "cpu" && !shared_backend(test_backend(), &why)) return {};
  std::shared_ptr<Plan> plans[2];
  std::vector<HostTensor> outs[2];
  for (int with : {0, 1}) {
    Network net;
    make(net, dynamic);
    BuilderConfig config;
    config.backend = test_backend();
    config.attention_views = with == 1;
    if (precision == TestPrecision::FP16) config.precisions = {Precision::FP32, Precision::FP16};
    if (precision == TestPrecision::BF16) config.precisions = {Precision::FP32, Precision::BF16};
    if (dynamic) {
      OptimizationProfile prof;
      for (const auto& [name, t] : inputs) {
        Dims lo = t.sizes(), hi = t.sizes();
        lo[0] = 1;
        hi[0] = 4;
        prof.set_dimensions(name, lo, t.sizes(), hi);
      }
      config.profiles.push_back(prof);
    }
    plans[with] = build(net, config);
    outs[with] = run(plans[with], inputs);
  }
  double tol = precision == TestPrecision::FP32 ? 1e-4 : 1e-2;
  for (size_t o = 0; o < outs[0].size(); ++o) {
    expect_close(outs[1][o], values(outs[0][o]), tol, precision == TestPrecision::FP32 ? 1e-5 : 1e-2,
                 "output " + std::to_string(o) + " with views vs without");
  }
  return {plans[0], plans[1]};
}

/// BERT (transformers, sdpa): linear -> reshape [B,S,H,D] -> transpose(0,2,1,3) -> attention for q, k, v;
/// attention -> transpose(0,2,1,3) -> reshape [B,S,E] -> linear. `q_also_output`: the transposed q is a
/// network output too. `bias`: each q/k/v linear adds a bias (torch's nn.Linear: W stored [N, K],
/// transposed). `kv_group` > 1: Llama's grouped-query attention, q projected to kH * kv_group heads over k
/// and v's kH.
NetFn bert_chain(bool q_also_output = false, bool bias = false, int64_t kv_group = 1) {
  return [=](Network& net, bool dynamic) {
    std::mt19937 rng(821);
    Tensor* x = net.add_input("x", DType::Float32, {dynamic ? -1 : kB, kS, kE});
    Tensor* heads[3];
    for (int i = 0; i < 3; ++i) {
      std::string n = std::string(1, "qkv"[i]);
      const int64_t h = i == 0 ? kH * kv_group : kH;
      Tensor* w = net.add_constant(n + "_w", random_tensor(DType::Float32, {kE, h * kD}, rng, -0.4, 0.4));
      Tensor* y = net.add_matrix_multiply(n + "_proj", x, false, w, bias);
      if (bias) {
        Tensor* b = net.add_constant(n + "_b", random_tensor(DType::Float32, {h * kD}, rng));
        y = net.add_elementwise(n + "_bias", y, b, ElementwiseOp::Add);
      }
      Tensor* r = net.add_shuffle(n + "_view", y, ShuffleParams{{}, true, {0, kS, h, kD}, {}});
      heads[i] = net.add_shuffle(n + "_transpose", r, ShuffleParams{{0, 2, 1, 3}, false, {}, {}});
    }
    if (q_also_output) {
      heads[0]->set_name("q_heads");
      net.mark_output(heads[0]);
    }
    AttentionParams params;
    params.kv_group = kv_group;
    Tensor* a = net.add_attention("attention", heads[0], heads[1], heads[2], nullptr, params);
    Tensor* t = net.add_shuffle("out_transpose", a, ShuffleParams{{0, 2, 1, 3}, false, {}, {}});
    Tensor* r = net.add_shuffle("out_view", t, ShuffleParams{{}, true, {0, kS, kE * kv_group}, {}});
    Tensor* w = net.add_constant("o_w", random_tensor(DType::Float32, {kE * kv_group, kE}, rng, -0.4, 0.4));
    Tensor* y = net.add_matrix_multiply("o_proj", r, false, w, false);
    y->set_name("y");
    net.mark_output(y);
  };
}

std::map<std::string, HostTensor> bert_inputs() {
  std::mt19937 rng(822);
  return {{"x", random_tensor(DType::Float32, {kB, kS, kE}, rng)}};
}

TEST(EngineAttentionViews, BertChainFolds) {
  for (TestPrecision precision : kAllPrecisions) {
    SCOPED_TRACE(precision == TestPrecision::FP32   ? "fp32"
                 : precision == TestPrecision::FP16 ? "fp16"
                                                    : "bf16");
    auto [off, on] = build_both(bert_chain(), bert_inputs(), precision);
    if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
    EXPECT_EQ(count_permutes(*off), 4);
    EXPECT_EQ(count_permutes(*on), 0) << "the q/k/v and output transposes are bypassed";
    const AttentionParams& p = attention_params(*on);
    for (int i = 0; i < 4; ++i) ASSERT_FALSE(p.view(i).empty()) << "operand " << i;
    // The q/k/v projections are one matmul [B,S,3E] (fuse_projections.cpp); q [B,H,S,D] over it: b -> S*3E,
    // h -> D, s -> 3E, d -> 1, at column 0 (k at E, v at 2E).
    EXPECT_EQ(count_in_plan(*off, LayerKind::MatrixMultiply), 4);
    EXPECT_EQ(count_in_plan(*on, LayerKind::MatrixMultiply), 2) << "q/k/v fused, then the output projection";
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(p.view(i).strides, (std::vector<int64_t>{kS * 3 * kE, kD, 3 * kE, 1})) << "operand " << i;
      EXPECT_EQ(p.view(i).offset, i * kE) << "operand " << i;
    }
    EXPECT_EQ(p.out_view.strides, (std::vector<int64_t>{kS * kE, kD, kE, 1}));
    EXPECT_EQ(p.out_dims, (std::vector<int64_t>{kB, kS, kH, kD}));
  }
}

// Grouped-query attention (Llama: 6 query heads over 3 key / value heads): the views read the kv heads in
// place, the three projections of widths 2E, E and E are one matmul [B, S, 4E].
TEST(EngineAttentionViews, GroupedQueryChainFolds) {
  for (TestPrecision precision : kAllPrecisions) {
    SCOPED_TRACE(precision == TestPrecision::FP32   ? "fp32"
                 : precision == TestPrecision::FP16 ? "fp16"
                                                    : "bf16");
    auto [off, on] = build_both(bert_chain(false, false, 2), bert_inputs(), precision);
    if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
    EXPECT_EQ(count_permutes(*on), 0) << "the q/k/v and output transposes are bypassed";
    EXPECT_EQ(count_in_plan(*on, LayerKind::MatrixMultiply), 2) << "q/k/v fused, then the output projection";
    const AttentionParams& p = attention_params(*on);
    EXPECT_EQ(p.kv_group, 2);
    const int64_t w = 4 * kE;
    EXPECT_EQ(p.q_view.dims, (std::vector<int64_t>{kB, 2 * kH, kS, kD}));
    EXPECT_EQ(p.k_view.dims, (std::vector<int64_t>{kB, kH, kS, kD}));
    EXPECT_EQ(p.k_view.strides, (std::vector<int64_t>{kS * w, kD, w, 1}));
    EXPECT_EQ(p.k_view.offset, 2 * kE);
    EXPECT_EQ(p.v_view.offset, 3 * kE);
    // The optimized kernel takes the grouped heads (fp32: the cpu one computes in fp32 only).
    for (const PlanLayerInfo& l : on->layers()) {
      if (l.kind == LayerKind::Attention && precision == TestPrecision::FP32) EXPECT_NE(l.tactic, "ref");
    }
  }
}

// nn.Linear's layout (W [N, K], transposed) with biases: the weights and the biases are concatenated; a
// refittable plan keeps the three projections (their weights stay as the program named them).
TEST(EngineAttentionViews, BertChainWithBiasesFusesItsProjections) {
  for (TestPrecision precision : kAllPrecisions) {
    SCOPED_TRACE(precision == TestPrecision::FP32   ? "fp32"
                 : precision == TestPrecision::FP16 ? "fp16"
                                                    : "bf16");
    auto [off, on] = build_both(bert_chain(false, true), bert_inputs(), precision);
    if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
    EXPECT_EQ(count_in_plan(*on, LayerKind::MatrixMultiply), 2);
    EXPECT_EQ(attention_params(*on).v_view.offset, 2 * kE);
  }
  Network net;
  bert_chain(false, true)(net, false);
  BuilderConfig config;
  config.backend = test_backend();
  config.refittable = true;
  auto plan = build(net, config);
  EXPECT_EQ(count_in_plan(*plan, LayerKind::MatrixMultiply), 4) << "refittable: no fusion";
  EXPECT_FALSE(attention_params(*plan).q_view.empty()) << "the views stay";
}

/// ViT-B/16 (torchvision nn.MultiheadAttention, batch_first, lowered): in_proj [L,B,3E] -> reshape
/// [1,L,B,3,E] -> transpose(0,-2) -> squeeze [3,L,B,E] -> select 0/1/2 -> reshape [L,B*H,D] -> transpose(0,1)
/// -> reshape [B,H,L,D] -> attention -> permute(2,0,1,3) -> reshape [L*B,E] -> linear.
NetFn vit_chain() {
  return [](Network& net, bool dynamic) {
    std::mt19937 rng(831);
    Tensor* x = net.add_input("x", DType::Float32, {kS, dynamic ? -1 : kB, kE});
    Tensor* w = net.add_constant("in_w", random_tensor(DType::Float32, {kE, 3 * kE}, rng, -0.4, 0.4));
    Tensor* proj = net.add_matrix_multiply("in_proj", x, false, w, false);  // [L, B, 3E]
    Tensor* u = net.add_shuffle("unflatten", proj, ShuffleParams{{}, true, {1, kS, kB, 3, kE}, {}});
    Tensor* t = net.add_shuffle("transpose", u, ShuffleParams{{3, 1, 2, 0, 4}, false, {}, {}});
    Tensor* sq = net.add_shuffle("squeeze", t, ShuffleParams{{}, true, {3, kS, kB, kE}, {}});
    Tensor* heads[3];
    for (int i = 0; i < 3; ++i) {
      std::string n = std::string(1, "qkv"[i]);
      Tensor* idx = net.add_constant(n + "_index", HostTensor::from_int64s({i}, {}));
      Tensor* s = net.add_gather(n + "_select", sq, idx, GatherParams{GatherParams::Default, 0});
      Tensor* r = net.add_shuffle(n + "_view", s, ShuffleParams{{}, true, {kS, kB * kH, kD}, {}});
      Tensor* tt = net.add_shuffle(n + "_transpose", r, ShuffleParams{{1, 0, 2}, false, {}, {}});
      heads[i] = net.add_shuffle(n + "_heads", tt, ShuffleParams{{}, true, {kB, kH, kS, kD}, {}});
    }
    Tensor* a = net.add_attention("attention", heads[0], heads[1], heads[2], nullptr, AttentionParams{});
    Tensor* p = net.add_shuffle("out_permute", a, ShuffleParams{{2, 0, 1, 3}, false, {}, {}});
    Tensor* r = net.add_shuffle("out_view", p, ShuffleParams{{}, true, {kS * kB, kE}, {}});
    Tensor* ow = net.add_constant("out_w", random_tensor(DType::Float32, {kE, kE}, rng, -0.4, 0.4));
    Tensor* y = net.add_matrix_multiply("out_proj", r, false, ow, false);
    y->set_name("y");
    net.mark_output(y);
  };
}

TEST(EngineAttentionViews, VitChainFolds) {
  std::mt19937 rng(832);
  std::map<std::string, HostTensor> inputs = {{"x", random_tensor(DType::Float32, {kS, kB, kE}, rng)}};
  for (TestPrecision precision : kAllPrecisions) {
    SCOPED_TRACE(precision == TestPrecision::FP32   ? "fp32"
                 : precision == TestPrecision::FP16 ? "fp16"
                                                    : "bf16");
    auto [off, on] = build_both(vit_chain(), inputs, precision);
    if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
    EXPECT_EQ(count_in_plan(*off, LayerKind::Gather), 3);
    EXPECT_EQ(count_in_plan(*on, LayerKind::Gather), 0) << "the selects are bypassed";
    EXPECT_EQ(count_permutes(*off), 5);
    EXPECT_EQ(count_permutes(*on), 0);
    const AttentionParams& p = attention_params(*on);
    const int64_t row = 3 * kE;  // elements per (l, b) row of the projection
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(p.view(i).strides, (std::vector<int64_t>{row, kD, kB * row, 1})) << "operand " << i;
      EXPECT_EQ(p.view(i).offset, i * kE) << "operand " << i;
    }
    EXPECT_EQ(p.out_view.strides, (std::vector<int64_t>{kE, kD, kB * kE, 1}));
  }
}

/// GPT-2 (transformers, eager attention fused by lowering): c_attn [B,S,3E] -> slices [B,S,E] at 0, E, 2E ->
/// reshape [B,S,H,D] -> transpose(0,2,1,3) -> attention (causal) -> transpose(0,2,1,3) -> reshape [B,S,E].
NetFn gpt2_chain() {
  return [](Network& net, bool dynamic) {
    std::mt19937 rng(841);
    Tensor* x = net.add_input("x", DType::Float32, {dynamic ? -1 : kB, kS, kE});
    Tensor* w = net.add_constant("c_attn_w", random_tensor(DType::Float32, {kE, 3 * kE}, rng, -0.4, 0.4));
    Tensor* qkv = net.add_matrix_multiply("c_attn", x, false, w, false);  // [B, S, 3E]
    Tensor* heads[3];
    for (int i = 0; i < 3; ++i) {
      std::string n = std::string(1, "qkv"[i]);
      SliceParams sp;
      sp.start = {0, 0, i * kE};
      sp.size = {kB, kS, kE};
      sp.stride = {1, 1, 1};
      Tensor* s = net.add_slice(n + "_split", qkv, sp);
      Tensor* r = net.add_shuffle(n + "_view", s, ShuffleParams{{}, true, {kB, kS, kH, kD}, {}});
      heads[i] = net.add_shuffle(n + "_transpose", r, ShuffleParams{{0, 2, 1, 3}, false, {}, {}});
    }
    AttentionParams ap;
    ap.causal = true;
    Tensor* a = net.add_attention("attention", heads[0], heads[1], heads[2], nullptr, ap);
    Tensor* t = net.add_shuffle("out_transpose", a, ShuffleParams{{0, 2, 1, 3}, false, {}, {}});
    Tensor* y = net.add_shuffle("out_view", t, ShuffleParams{{}, true, {kB, kS, kE}, {}});
    y->set_name("y");
    net.mark_output(y);
  };
}

TEST(EngineAttentionViews, Gpt2SplitChainFolds) {
  std::mt19937 rng(842);
  std::map<std::string, HostTensor> inputs = {{"x", random_tensor(DType::Float32, {kB, kS, kE}, rng)}};
  auto [off, on] = build_both(gpt2_chain(), inputs, TestPrecision::FP32);
  if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
  EXPECT_EQ(count_in_plan(*off, LayerKind::Slice), 3);
  EXPECT_EQ(count_in_plan(*on, LayerKind::Slice), 0) << "the q/k/v split is bypassed";
  EXPECT_EQ(count_permutes(*on), 0);
  const AttentionParams& p = attention_params(*on);
  for (int i = 0; i < 3; ++i) {
    // [B,H,S,D] over the projection [B,S,3E]: b -> S*3E, h -> D, s -> 3E, d -> 1, from the slice's start.
    EXPECT_EQ(p.view(i).strides, (std::vector<int64_t>{kS * 3 * kE, kD, 3 * kE, 1})) << "operand " << i;
    EXPECT_EQ(p.view(i).offset, i * kE) << "operand " << i;
  }
}

TEST(EngineAttentionViews, DynamicDimsAreLeftAlone) {
  auto [off, on] = build_both(bert_chain(), bert_inputs(), TestPrecision::FP32, true);
  if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
  EXPECT_FALSE(attention_params(*on).has_views());
  EXPECT_EQ(count_permutes(*on), 4);
}

TEST(EngineAttentionViews, BypassedTensorUsedElsewhere) {
  // The transposed q is also a network output: its transpose stays (for the output), attention still reads
  // the projection through a view, and both outputs are right.
  auto [off, on] = build_both(bert_chain(true), bert_inputs(), TestPrecision::FP32);
  if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
  EXPECT_FALSE(attention_params(*on).q_view.empty());
  EXPECT_EQ(count_permutes(*on), 1);
}

TEST(EngineAttentionViews, ChainsThatDoNotComposeOrLeaveTheHeadDimStrided) {
  // q: x [2, 6, 8] -> transpose(1, 0, 2) -> reshape [1, 3, 4, 8]: the new dim of 4 takes half of the old dim
  // of 6 (stride 8) and the dim of 2 (stride 48), which do not coalesce. k: [B, H, D, S] -> transpose(0, 1,
  // 3, 2): the head dim has stride S. v: dense. Neither q nor k gets a view; the result is right.
  auto make = [](Network& net, bool) {
    Tensor* x = net.add_input("x", DType::Float32, {2, 6, 8});
    Tensor* kt = net.add_input("kt", DType::Float32, {1, 3, 8, 7});
    Tensor* v = net.add_input("v", DType::Float32, {1, 3, 7, 8});
    Tensor* t = net.add_shuffle("q_transpose", x, ShuffleParams{{1, 0, 2}, false, {}, {}});
    Tensor* q = net.add_shuffle("q_view", t, ShuffleParams{{}, true, {1, 3, 4, 8}, {}});
    Tensor* k = net.add_shuffle("k_transpose", kt, ShuffleParams{{0, 1, 3, 2}, false, {}, {}});
    Tensor* y = net.add_attention("attention", q, k, v, nullptr, AttentionParams{});
    y->set_name("y");
    net.mark_output(y);
  };
  std::mt19937 rng(841);
  std::map<std::string, HostTensor> inputs = {{"x", random_tensor(DType::Float32, {2, 6, 8}, rng)},
                                              {"kt", random_tensor(DType::Float32, {1, 3, 8, 7}, rng)},
                                              {"v", random_tensor(DType::Float32, {1, 3, 7, 8}, rng)}};
  auto [off, on] = build_both(make, inputs, TestPrecision::FP32);
  if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
  EXPECT_FALSE(attention_params(*on).has_views());
  EXPECT_EQ(count_permutes(*on), 2);
}

TEST(EngineAttentionViews, PlanRoundTripKeepsViews) {
  auto [off, on] = build_both(vit_chain(),
                              {{"x",
                                [] {
                                  std::mt19937 rng(851);
                                  return random_tensor(DType::Float32, {kS, kB, kE}, rng);
                                }()}},
                              TestPrecision::FP32);
  if (!on) GTEST_SKIP() << "backend " << test_backend() << " unavailable";
  auto loaded = Plan::deserialize(on->serialize());
  const AttentionParams &a = attention_params(*on), &b = attention_params(*loaded);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.view(i).dims, b.view(i).dims);
    EXPECT_EQ(a.view(i).strides, b.view(i).strides);
    EXPECT_EQ(a.view(i).offset, b.view(i).offset);
  }
  EXPECT_EQ(a.out_dims, b.out_dims);
}

}  // namespace
}  // namespace kiln::engine
