// The cuda tactics "flash", "flash_wide" and "flash_tall" (fused FlashAttention-2 style attention on tensor
// cores, flash_attention.cu, in three CTA shapes; "flash_tall" up to head dim 64). Where
// the toolkit is built: which layers it applies to (no GPU needed). With a GPU (EngineCuda.*, label gpu
// through kiln_engine_gpu_tests): the kernel, selected by name through Backend::create_kernel, against a
// double-precision reference over shapes that are not multiples of the tiles (197, 77, 131 ...), Lq != Lk,
// head dims 20 to 128, causal, Bool and additive masks broadcast over batch and heads, fully masked rows,
// unaligned buffers (element loads); and plans, where it is the Attention tactic taken without timing.
//
// Tolerance: max |flash - reference| <= 1e-2 * max |reference| over each output, NaN exactly where the
// reference has NaN (none here: rows whose keys are all masked give 0, as torch's safe softmax). The
// reference is computed in double from the very fp16/bf16 values the kernel reads, so only the kernel's own
// roundings count: the products of Q K^T are exact in fp32 and summed in fp32; the probabilities P are
// rounded to the input type before P V (relative 2^-11 for fp16, 2^-8 for bf16, errors of random sign that
// average out over the keys); the output is rounded once (2^-8 of its magnitude for bf16). Together they stay
// well below 1e-2 of the output's largest magnitude.

#if KILN_HAVE_CUDA

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "engine/backends/cuda/attention/flash_attention.h"
#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/matmul_fp8.h"
#include "engine/engine_test_util.h"
#include "engine/ops/fp8.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// An Attention layer over static tensors, with the LayerInfo a backend sees (it points into the layer).
struct AttentionLayer {
  Layer layer;
  LayerInfo info;
  AttentionLayer(const std::vector<HostTensor>& inputs, AttentionParams p) {
    layer.name = "attention_test";
    layer.kind = LayerKind::Attention;
    p.has_mask = inputs.size() > 3;
    layer.params = p;
    for (size_t i = 0; i < inputs.size(); ++i) {
      layer.inputs.push_back(static_cast<int64_t>(i));
      const Dims& d = inputs[i].sizes();
      info.inputs.push_back({"in" + std::to_string(i), inputs[i].dtype(), d, d, d});
    }
    layer.outputs = {static_cast<int64_t>(inputs.size())};
    Dims out = inputs[0].sizes();
    out.back() = inputs[2].sizes().back();
    info.outputs.push_back({"out", inputs[0].dtype(), out, out, out});
    info.layer = &layer;
  }
  AttentionLayer(const AttentionLayer&) = delete;
};

/// softmax(q k^T * scale + mask) v in double over the inputs' values; mask broadcast to [batch..., Lq, Lk],
/// Bool (false = masked) or additive.
std::vector<double> reference(const std::vector<HostTensor>& in, bool causal, double scale) {
  const Dims &qd = in[0].sizes(), &vd = in[2].sizes();
  size_t r = qd.size();
  int64_t lq = qd[r - 2], e = qd[r - 1], lk = in[1].sizes()[r - 2], ev = vd[r - 1];
  Dims batch(qd.begin(), qd.end() - 2);
  int64_t nb = 1;
  for (int64_t x : batch) nb *= x;
  if (scale <= 0) scale = 1.0 / std::sqrt(static_cast<double>(e));
  const HostTensor* mask = in.size() > 3 ? &in[3] : nullptr;
  std::vector<double> y;
  std::vector<double> s(static_cast<size_t>(lk));
  for (int64_t b = 0; b < nb; ++b) {
    std::vector<int64_t> idx = unravel(b, batch);
    idx.push_back(0);
    idx.push_back(0);
    for (int64_t i = 0; i < lq; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < lk; ++j) {
        double d = 0;
        for (int64_t c = 0; c < e; ++c)
          d += in[0].get_as_double((b * lq + i) * e + c) * in[1].get_as_double((b * lk + j) * e + c);
        d *= scale;
        if (causal && j > i) d = -INFINITY;
        if (mask) {
          idx[r - 2] = i;
          idx[r - 1] = j;
          double m = mask->get_as_double(ravel_broadcast(idx, mask->sizes()));
          if (mask->dtype() == DType::Bool) {
            if (m == 0) d = -INFINITY;
          } else {
            d += m;
          }
        }
        s[j] = d;
        mx = std::max(mx, d);
      }
      double sum = 0;
      for (int64_t j = 0; j < lk; ++j) sum += (s[j] = s[j] == -INFINITY ? 0.0 : std::exp(s[j] - mx));
      for (int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j) acc += s[j] * in[2].get_as_double((b * lk + j) * ev + c);
        y.push_back(sum == 0 ? acc : acc / sum);  // every key masked: 0 (torch's safe softmax)
      }
    }
  }
  return y;
}

/// Runs tactic `tactic` on the inputs; every device buffer starts `misalign` elements past a 256-byte
/// boundary (so 0 gives 16-byte loads, 1 element loads). With `e4m3_range`, the output is E4M3 codes with
/// that range (the FP8 projection's input the kernel writes in its epilogue), one byte each as a UInt8
/// tensor.
HostTensor run_flash(const std::vector<HostTensor>& inputs, const AttentionParams& p,
                     const std::string& tactic, size_t misalign = 0,
                     std::optional<DynamicRange> e4m3_range = std::nullopt) {
  const Backend& b = *shared_backend("cuda");
  AttentionLayer t(inputs, p);
  if (e4m3_range) {
    t.info.outputs[0].format = TensorFormat::E4M3;
    t.info.outputs[0].range = e4m3_range;
  }
  std::unique_ptr<Kernel> k = b.create_kernel(t.info, tactic);
  DeviceBuffers dev{&b, {}};
  KernelArgs args;
  auto place = [&](size_t bytes, DType dt) {
    size_t shift = misalign * dtype_size(dt);
    return static_cast<uint8_t*>(dev.add(bytes + shift)) + shift;
  };
  for (const auto& x : inputs) {
    void* ptr = place(x.nbytes(), x.dtype());
    b.copy(ptr, x.data(), x.nbytes(), CopyKind::HostToDevice, nullptr);
    args.inputs.push_back(TensorView{ptr, x.dtype(), x.sizes()});
    args.input_values.push_back(nullptr);
  }
  HostTensor out(e4m3_range ? DType::UInt8 : t.info.outputs[0].dtype, t.info.outputs[0].opt);
  void* optr = place(out.nbytes(), out.dtype());
  args.outputs.push_back(TensorView{optr, t.info.outputs[0].dtype, out.sizes()});
  args.outputs.back().format = t.info.outputs[0].format;
  k->execute(args);
  b.copy(out.mutable_data(), optr, out.nbytes(), CopyKind::DeviceToHost, nullptr);
  b.synchronize(nullptr);
  return out;
}

/// The tolerance stated at the top of the file.
void expect_flash_matches(const HostTensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
  double scale = 0, worst = 0;
  int64_t worst_at = -1, nan_mismatch = 0;
  for (double w : want) {
    if (!std::isnan(w)) scale = std::max(scale, std::fabs(w));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get_as_double(static_cast<int64_t>(i));
    if (std::isnan(want[i]) || std::isnan(g)) {
      nan_mismatch += std::isnan(want[i]) != std::isnan(g);
      continue;
    }
    if (std::fabs(g - want[i]) > worst) worst = std::fabs(g - want[i]), worst_at = static_cast<int64_t>(i);
  }
  EXPECT_EQ(nan_mismatch, 0) << what << ": NaN where the reference has none, or the reverse";
  EXPECT_LE(worst, 1e-2 * scale) << what << ": max error " << worst << " at [" << worst_at << "] (got "
                                 << (worst_at >= 0 ? got.get_as_double(worst_at) : 0.0) << ", want "
                                 << (worst_at >= 0 ? want[worst_at] : 0.0) << "), largest output " << scale;
}

/// One test case: q [..., Lq, E], k [..., Lk, E], v [..., Lk, Ev] and what is set on top.
struct FlashCase {
  std::string what;
  Dims q, k, v;
  bool causal = false;
  double scale = 0;
  Dims mask;                         // empty: no mask
  bool bool_mask = false;            // else additive, in the q dtype
  std::vector<int64_t> masked_rows;  // mask rows (of the mask as [rows, Lk]) whose every key is masked: query
                                     // rows of an [Lq, Lk] mask, batches of a [B, 1, 1, Lk] one
  double range = 1;                  // q and k uniform in [-range, range); v in [-1, 1)
  size_t misalign = 0;               // elements past an aligned address of every buffer

  FlashCase(std::string w, Dims qd, Dims kd, Dims vd)
      : what(std::move(w)), q(std::move(qd)), k(std::move(kd)), v(std::move(vd)) {}
  /// q, k and v of the same dims.
  FlashCase(std::string w, const Dims& d) : FlashCase(std::move(w), d, d, d) {}
  FlashCase& with_causal() {
    causal = true;
    return *this;
  }
  FlashCase& with_scale(double s) {
    scale = s;
    return *this;
  }
  FlashCase& with_mask(Dims d, bool is_bool, std::vector<int64_t> all_masked_rows = {}) {
    mask = std::move(d);
    bool_mask = is_bool;
    masked_rows = std::move(all_masked_rows);
    return *this;
  }
  FlashCase& with_range(double r) {
    range = r;
    return *this;
  }
  FlashCase& unaligned() {
    misalign = 1;
    return *this;
  }
};

std::vector<HostTensor> make_inputs(const FlashCase& c, DType dt, std::mt19937& rng) {
  std::vector<HostTensor> in = {random_tensor(dt, c.q, rng, -c.range, c.range),
                                random_tensor(dt, c.k, rng, -c.range, c.range), random_tensor(dt, c.v, rng)};
  if (c.mask.empty()) return in;
  HostTensor m = c.bool_mask ? HostTensor(DType::Bool, c.mask) : random_tensor(dt, c.mask, rng, -2.0, 1.0);
  if (c.bool_mask) {
    std::bernoulli_distribution keep(0.7);
    for (int64_t i = 0; i < m.numel(); ++i) m.set_from_double(i, keep(rng) ? 1 : 0);
  }
  int64_t lk = c.mask.back();
  for (int64_t row : c.masked_rows) {
    for (int64_t j = 0; j < lk; ++j) m.set_from_double(row * lk + j, c.bool_mask ? 0 : -INFINITY);
  }
  in.push_back(m);
  return in;
}

const KernelRow& attention_row(const char* name) {
  const KernelRow* row = cuda::cuda_kernels().find(LayerKind::Attention, name);
  if (row == nullptr) throw std::runtime_error(std::string("no cuda Attention tactic ") + name);
  return *row;
}
const KernelRow& flash_row() { return attention_row("flash"); }

void check_cases(const std::vector<FlashCase>& cases, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const FlashCase& c : cases) {
    for (DType dt : {DType::Float16, DType::BFloat16}) {
      std::string what = c.what + " " + dtype_name(dt);
      std::vector<HostTensor> in = make_inputs(c, dt, rng);
      AttentionParams p;
      p.causal = c.causal;
      p.scale = c.scale;
      const std::vector<double> want = reference(in, c.causal, c.scale);
      for (const char* tactic : {"flash", "flash_wide", "flash_tall"}) {
        AttentionLayer t(in, p);
        std::string why;
        if (!attention_row(tactic).applies(t.info, &why)) {
          // only the tall shape refuses, and only head dims above 64
          EXPECT_EQ(std::string(tactic), "flash_tall") << what << ": " << why;
          EXPECT_NE(why.find("head dims up to 64"), std::string::npos) << what << ": " << why;
          EXPECT_GT(std::max(c.q.back(), c.v.back()), 64) << what;
          continue;
        }
        expect_flash_matches(run_flash(in, p, tactic, c.misalign), want, what + " " + tactic);
      }
    }
  }
}

// ---- Which layers "flash" takes (no GPU needed) ----

TEST(EngineFlashAttention, ListedBeforeGenericAndOnlyForHalfTypesUpToHeadDim128) {
  std::vector<std::string> names;
  for (const auto& r : cuda::cuda_kernels().rows()) {
    if (r.kind == LayerKind::Attention) names.push_back(r.name);
  }
  // without timing, "flash" is taken
  ASSERT_EQ(names, (std::vector<std::string>{"flash", "flash_wide", "flash_tall", "generic"}));
  std::mt19937 rng(401);
  auto applies = [&](DType dt, int64_t e, int64_t ev, std::string* why) {
    AttentionLayer t(
        {HostTensor(dt, {2, 3, 9, e}), HostTensor(dt, {2, 3, 5, e}), HostTensor(dt, {2, 3, 5, ev})}, {});
    return flash_row().applies(t.info, why);
  };
  std::string why;
  EXPECT_FALSE(applies(DType::Float32, 64, 64, &why));
  EXPECT_NE(why.find("f16 and bf16"), std::string::npos) << why;
  EXPECT_FALSE(applies(DType::Float16, 256, 64, &why));
  EXPECT_NE(why.find("head dims above 128"), std::string::npos) << why;
  EXPECT_FALSE(applies(DType::BFloat16, 64, 136, &why));
  EXPECT_NE(why.find("head dims above 128"), std::string::npos) << why;
  // Half types with head dims <= 128 apply wherever a device of compute capability >= 8.0 is there.
  std::string no_gpu;
  bool gpu = shared_backend("cuda", &no_gpu) != nullptr;
  for (auto [e, ev] : std::vector<std::pair<int64_t, int64_t>>{{64, 64}, {128, 128}, {20, 72}, {1, 1}}) {
    bool ok = applies(DType::Float16, e, ev, &why) && applies(DType::BFloat16, e, ev, &why);
    if (gpu) {
      EXPECT_TRUE(ok) << e << " " << ev << ": " << why;
    } else {
      EXPECT_FALSE(ok);
    }
  }
}

// ---- On the GPU: the kernel against the reference ----

TEST(EngineCuda, FlashAttentionShapes) {
  KILN_REQUIRE_GPU();
  check_cases(
      {
          FlashCase("vit [2,3,197,64]", {2, 3, 197, 64}),
          FlashCase("bert [1,12,128,64]", {1, 12, 128, 64}),
          FlashCase("clip causal [2,2,77,128]", {2, 2, 77, 128}).with_causal(),
          FlashCase("Lq < Lk", {2, 3, 50, 64}, {2, 3, 131, 64}, {2, 3, 131, 64}),
          FlashCase("Lq > Lk causal", {1, 2, 150, 64}, {1, 2, 40, 64}, {1, 2, 40, 64}).with_causal(),
          FlashCase("Lq < Lk causal", {1, 2, 70, 64}, {1, 2, 200, 64}, {1, 2, 200, 64}).with_causal(),
          FlashCase("one query, one key", {3, 1, 1, 64}),
          // Many key tiles with peaked scores (scale 1, |q|, |k| < 2): the running max changes across tiles.
          FlashCase("long keys, peaked", {1, 2, 70, 64}, {1, 2, 1000, 64}, {1, 2, 1000, 64})
              .with_scale(1.0)
              .with_range(2.0),
          FlashCase("rank 3 batch", {6, 33, 64}, {6, 45, 64}, {6, 45, 64}),
          FlashCase("rank 5 batch", {2, 2, 2, 17, 64}),
          FlashCase("scale 0.3", {2, 2, 65, 64}).with_scale(0.3),
          // Causal over several query tiles of every CTA shape (64, 128 rows): tiles go out last first, and a
          // warp skips the key tiles wholly after its rows; with a full mask too (its per-tile loads).
          FlashCase("causal [3,2,300,64]", {3, 2, 300, 64}).with_causal(),
          FlashCase("causal [1,3,520,32] mask", {1, 3, 520, 32}).with_causal().with_mask({520, 520}, true),
          // Causal with additive masks (added in log2 units, the other scores scaled in the exponent), a full
          // one with -inf rows and a key-padding row (the staged kernel).
          FlashCase("causal additive [Lq,Lk]", {1, 3, 300, 64})
              .with_causal()
              .with_mask({300, 300}, false, {3}),
          FlashCase("causal additive [B,1,1,Lk]", {2, 2, 200, 64})
              .with_causal()
              .with_mask({2, 1, 1, 200}, false),
      },
      402);
}

TEST(EngineCuda, FlashAttentionHeadDims) {
  KILN_REQUIRE_GPU();
  check_cases(
      {
          FlashCase("E 32", {2, 2, 40, 32}),
          FlashCase("E 8", {2, 2, 40, 8}),
          FlashCase("E 80 (padded to 128)", {2, 2, 70, 80}),
          FlashCase("E 96 causal", {1, 3, 100, 96}).with_causal(),
          FlashCase("E 40, Ev 24", {2, 2, 33, 40}, {2, 2, 47, 40}, {2, 2, 47, 24}),
          FlashCase("E 64, Ev 128", {1, 2, 66, 64}, {1, 2, 66, 64}, {1, 2, 66, 128}),
          // Head dims that are not multiples of 8 take element loads and stores.
          FlashCase("E 20, Ev 12", {2, 2, 37, 20}, {2, 2, 37, 20}, {2, 2, 37, 12}),
          FlashCase("E 127, Ev 3", {1, 2, 65, 127}, {1, 2, 65, 127}, {1, 2, 65, 3}),
          // Buffers 2 bytes past an aligned address: element loads although E is a multiple of 8.
          FlashCase("unaligned buffers", {2, 3, 197, 64}).unaligned(),
          FlashCase("unaligned buffers, causal, mask", {1, 2, 77, 64})
              .with_causal()
              .with_mask({77, 77}, true)
              .unaligned(),
      },
      403);
}

TEST(EngineCuda, FlashAttentionMasks) {
  KILN_REQUIRE_GPU();
  check_cases(
      {
          // BERT's key padding mask [B, 1, 1, Lk]: broadcast over heads and query rows.
          FlashCase("bool [2,1,1,Lk]", {2, 12, 128, 64}).with_mask({2, 1, 1, 128}, true),
          FlashCase("bool [Lq,Lk]", {2, 3, 197, 64}).with_mask({197, 197}, true),
          // Row 0 keeps only key 0 under the causal mask: where the Bool mask drops it too, the row is 0.
          FlashCase("bool [H,1,Lk] causal", {2, 3, 90, 64}).with_causal().with_mask({3, 1, 90}, true),
          FlashCase("additive [B,H,Lq,Lk]", {2, 3, 70, 64}, {2, 3, 150, 64}, {2, 3, 150, 64})
              .with_mask({2, 3, 70, 150}, false),
          FlashCase("additive [1,H,Lq,Lk] scale", {2, 3, 65, 128})
              .with_scale(0.5)
              .with_mask({1, 3, 65, 65}, false),
          FlashCase("additive [Lk]", {2, 2, 100, 64}, {2, 2, 77, 64}, {2, 2, 77, 64}).with_mask({77}, false),
          FlashCase("additive [B,1,Lq,1]", {2, 2, 50, 64}).with_mask({2, 1, 50, 1}, false),
          // Rows whose keys are all masked give 0 (torch's safe softmax), as the reference does; the others
          // are unaffected.
          FlashCase("bool fully masked rows", {2, 2, 130, 64}, {2, 2, 100, 64}, {2, 2, 100, 64})
              .with_mask({130, 100}, true, {0, 5, 64, 129}),
          FlashCase("additive -inf rows", {1, 2, 70, 64}).with_mask({70, 70}, false, {3, 69}),
          // Masks the same for every query with Lk up to kMaskRowKeys are staged in shared memory once (the
          // kRowMask kernel): a batch whose keys are all masked, bool and additive; then an Lk past the
          // staged row, which takes the per-tile loads.
          FlashCase("bool [B,1,1,Lk] batch 1 masked", {2, 2, 70, 64}).with_mask({2, 1, 1, 70}, true, {1}),
          FlashCase("additive [B,1,1,Lk] batch 0 -inf", {2, 2, 70, 64}).with_mask({2, 1, 1, 70}, false, {0}),
          FlashCase("bool [B,1,1,Lk] Lk 600", {1, 2, 40, 64}, {1, 2, 600, 64}, {1, 2, 600, 64})
              .with_mask({1, 1, 1, 600}, true),
          // The staging boundary (512 keys staged, 513 per tile) and a mask of one value per batch.
          FlashCase("bool [B,1,1,Lk] Lk 512", {2, 2, 33, 64}, {2, 2, 512, 64}, {2, 2, 512, 64})
              .with_mask({2, 1, 1, 512}, true, {1}),
          FlashCase("additive [B,1,1,Lk] Lk 513", {2, 2, 33, 64}, {2, 2, 513, 64}, {2, 2, 513, 64})
              .with_mask({2, 1, 1, 513}, false),
          FlashCase("additive [B,1,1,1]", {2, 2, 70, 64}).with_mask({2, 1, 1, 1}, false),
      },
      404);
}

// The E4M3 epilogue of every shape: the codes of the very values the shape stores in 16 bits (what a Reformat
// of its output would make), causal over several query tiles (the wide and tall shapes' warps skip tiles).
TEST(EngineCuda, FlashAttentionE4m3OutputEveryShape) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(406);
  const FlashCase c = FlashCase("causal e4m3", {2, 2, 150, 64}).with_causal();
  const DynamicRange range{-0.7f, 0.9f};
  const float inverse_scale = 1.0f / cuda::usable_fp8_scale(range);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const std::vector<HostTensor> in = make_inputs(c, dt, rng);
    AttentionParams p;
    p.causal = true;
    for (const char* tactic : {"flash", "flash_wide", "flash_tall"}) {
      const std::string what = std::string(dtype_name(dt)) + " " + tactic;
      const HostTensor values = run_flash(in, p, tactic), codes = run_flash(in, p, tactic, 0, range);
      ASSERT_EQ(codes.numel(), values.numel()) << what;
      int64_t wrong = 0;
      for (int64_t i = 0; i < values.numel(); ++i) {
        const uint8_t want = ops::float_to_e4m3(static_cast<float>(values.get_as_double(i)) * inverse_scale);
        wrong += static_cast<const uint8_t*>(codes.data())[i] != want;
      }
      EXPECT_EQ(wrong, 0) << what << ": codes that differ from the stored values' of " << values.numel();
    }
  }
}

// ---- Plans: "flash" is the tactic without timing; timed builds run right with either ----

TEST(EngineCuda, FlashAttentionInPlans) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(405);
  std::vector<HostTensor> in = {random_tensor(DType::Float32, {2, 3, 197, 64}, rng),
                                random_tensor(DType::Float32, {2, 3, 197, 64}, rng),
                                random_tensor(DType::Float32, {2, 3, 197, 64}, rng)};
  std::vector<double> want = reference(in, false, 0);
  for (int timing : {0, 2}) {
    for (Precision prec : {Precision::FP16, Precision::FP32}) {
      Network net;
      Tensor* q = net.add_input("q", DType::Float32, {2, 3, 197, 64});
      Tensor* k = net.add_input("k", DType::Float32, {2, 3, 197, 64});
      Tensor* v = net.add_input("v", DType::Float32, {2, 3, 197, 64});
      Tensor* y = net.add_attention("attn", q, k, v, nullptr, AttentionParams{});
      y->set_name("y");
      net.mark_output(y);
      BuilderConfig config;
      config.backend = "cuda";
      config.precisions = prec == Precision::FP32 ? std::vector<Precision>{Precision::FP32}
                                                  : std::vector<Precision>{Precision::FP32, prec};
      config.timing_iterations = timing;
      auto plan = build(net, config);
      std::string tactic;
      for (const auto& l : plan->layers()) {
        if (l.kind == LayerKind::Attention) tactic = l.tactic;
      }
      std::string what =
          std::string(prec == Precision::FP16 ? "fp16" : "fp32") + " timing " + std::to_string(timing);
      if (prec == Precision::FP32) {
        EXPECT_EQ(tactic, "generic") << what;  // flash takes f16 / bf16 only
      } else if (timing == 0) {
        EXPECT_EQ(tactic, "flash") << what;  // the first tactic
      }
      HostTensor got = run(plan, {{"q", in[0]}, {"k", in[1]}, {"v", in[2]}})[0];
      // fp16 plans round the fp32 inputs first: check_layer's fp16 tolerance (rtol = atol = 1e-2) applies.
      expect_close(got, want, prec == Precision::FP32 ? 1e-4 : 1e-2, prec == Precision::FP32 ? 1e-5 : 1e-2,
                   what);
    }
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
