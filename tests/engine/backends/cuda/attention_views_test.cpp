// The cuda Attention tactics ("flash", "flash_wide", "flash_tall", "generic") with strided operand and output
// views (AttentionView): which views "flash" takes (rows 16-byte aligned; no GPU needed for the refusals),
// and on a GPU (EngineCuda.*) each tactic, selected by name, against a double reference over the logical
// values: ViT-like q/k/v read from one [L, B, 3E] buffer at offsets 0, E, 2E and the output written [L, B, H,
// D]; BERT-like q/k/v over [B, S, E]; views mixed with dense operands, causal, a Bool mask; unaligned views
// (generic only).
//
// Tolerance: max |got - reference| <= 1e-2 * max |reference| (as flash_attention_test.cpp: the reference is
// computed in double from the very fp16/bf16/fp32 values the kernel reads; P is rounded to the input type
// before P V, the output once).

#if KILN_HAVE_CUDA

#include <cmath>
#include <stdexcept>

#include "engine/attention_reference.h"
#include "engine/backends/cuda/cuda_util.h"
#include "engine/engine_test_util.h"
#include "engine/ops/attention_layout.h"
#include "engine/ops/shape_inference.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// An Attention layer over static buffers with params `p` (views included), and the LayerInfo a backend sees.
struct ViewLayer {
  Layer layer;
  LayerInfo info;
  ViewLayer(const std::vector<HostTensor>& inputs, const AttentionParams& p) {
    layer.name = "attention_views_test";
    layer.kind = LayerKind::Attention;
    layer.params = p;
    std::vector<ShapeIn> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      layer.inputs.push_back(static_cast<int64_t>(i));
      const Dims& d = inputs[i].sizes();
      info.inputs.push_back({"in" + std::to_string(i), inputs[i].dtype(), d, d, d});
      in.push_back(ShapeIn{inputs[i].dtype(), d, nullptr});
    }
    layer.outputs = {static_cast<int64_t>(inputs.size())};
    Dims out = infer_shapes(layer, in).at(0).dims;
    info.outputs.push_back({"out", inputs[0].dtype(), out, out, out});
    info.layer = &layer;
  }
  ViewLayer(const ViewLayer&) = delete;
};

const KernelRow& tactic_row(const std::string& name) {
  for (const auto& r : cuda::cuda_kernels().rows()) {
    if (r.name == name && r.kind == LayerKind::Attention) return r;
  }
  throw std::runtime_error("no cuda Attention tactic " + name);
}

/// Runs tactic `tactic` (the output buffer starts as NaN bytes: every element must be written).
HostTensor run_tactic(const std::vector<HostTensor>& inputs, const AttentionParams& p,
                      const std::string& tactic) {
  const Backend& b = *shared_backend("cuda");
  ViewLayer t(inputs, p);
  std::unique_ptr<Kernel> k = b.create_kernel(t.info, tactic);
  DeviceBuffers dev{&b, {}};
  KernelArgs args;
  for (const auto& x : inputs) {
    void* ptr = dev.add(x.nbytes());
    b.copy(ptr, x.data(), x.nbytes(), CopyKind::HostToDevice, nullptr);
    args.inputs.push_back(TensorView{ptr, x.dtype(), x.sizes()});
    args.input_values.push_back(nullptr);
  }
  HostTensor out(t.info.outputs[0].dtype, t.info.outputs[0].opt);
  std::vector<uint8_t> nan_bytes(out.nbytes(), 0xff);
  void* optr = dev.add(out.nbytes());
  b.copy(optr, nan_bytes.data(), nan_bytes.size(), CopyKind::HostToDevice, nullptr);
  args.outputs.push_back(TensorView{optr, out.dtype(), out.sizes()});
  k->execute(args);
  b.copy(out.mutable_data(), optr, out.nbytes(), CopyKind::DeviceToHost, nullptr);
  b.synchronize(nullptr);
  return out;
}

void expect_matches(const HostTensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
  double scale = 0, worst = 0;
  int64_t nan = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get_as_double(static_cast<int64_t>(i));
    if (std::isnan(g)) {
      ++nan;
      continue;
    }
    worst = std::max(worst, std::fabs(g - want[i]));
  }
  EXPECT_EQ(nan, 0) << what << ": elements left unwritten or NaN";
  EXPECT_LE(worst, 1e-2 * scale) << what << ": max error " << worst << ", largest output " << scale;
}

struct ViewCase {
  std::string what;
  std::vector<HostTensor> inputs;  // fp32 values; cast to the tested dtype
  AttentionParams p;
};

std::vector<ViewCase> cases(int64_t l, int64_t d) {
  const int64_t b = 2, h = 3, e = h * d;
  std::mt19937 rng(901);
  std::vector<ViewCase> out;
  {  // ViT: in_proj [L, B, 3E], output [L, B, H, D]
    ViewCase c{"vit in_proj views", {}, {}};
    HostTensor x = random_tensor(DType::Float32, {l, b, 3 * e}, rng);
    c.inputs = {x, x, x};
    for (int i = 0; i < 3; ++i) c.p.view(i) = strided_view({b, h, l, d}, {3 * e, d, b * 3 * e, 1}, i * e);
    c.p.out_view = strided_view({b, h, l, d}, {e, d, b * e, 1}, 0);
    c.p.out_dims = {l, b, h, d};
    out.push_back(std::move(c));
  }
  {  // BERT: q/k/v [B, S, E] each, output [B, S, H, D], causal
    ViewCase c{"bert views, causal", {}, {}};
    for (int i = 0; i < 3; ++i) {
      c.inputs.push_back(random_tensor(DType::Float32, {b, l, e}, rng));
      c.p.view(i) = strided_view({b, h, l, d}, {l * e, d, e, 1}, 0);
    }
    c.p.causal = true;
    c.p.out_view = strided_view({b, h, l, d}, {l * e, d, e, 1}, 0);
    c.p.out_dims = {b, l, h, d};
    out.push_back(std::move(c));
  }
  {  // q through a view, dense k/v (Lk = L + 3), a Bool mask [B, 1, L, Lk], dense output
    ViewCase c{"q view, dense k/v, mask", {}, {}};
    c.inputs.push_back(random_tensor(DType::Float32, {b, l, e}, rng));
    c.inputs.push_back(random_tensor(DType::Float32, {b, h, l + 3, d}, rng));
    c.inputs.push_back(random_tensor(DType::Float32, {b, h, l + 3, d}, rng));
    HostTensor m(DType::Bool, {b, 1, l, l + 3});
    for (int64_t i = 0; i < m.numel(); ++i)
      m.set_from_double(i, i % 5 == 2 ? 0.0 : 1.0);  // no row fully masked
    c.inputs.push_back(m);
    c.p.has_mask = true;
    c.p.q_view = strided_view({b, h, l, d}, {l * e, d, e, 1}, 0);
    out.push_back(std::move(c));
  }
  return out;
}

HostTensor cast_to(const HostTensor& t, DType dt) { return t.dtype() == DType::Bool ? t : t.to(dt); }

void check_tactic(const std::string& tactic, const std::vector<DType>& dtypes, int64_t l, int64_t d) {
  for (DType dt : dtypes) {
    for (auto& c : cases(l, d)) {
      std::vector<HostTensor> in;
      for (const auto& x : c.inputs) in.push_back(cast_to(x, dt));
      ViewLayer probe(in, c.p);
      std::string why;
      ASSERT_TRUE(tactic_row(tactic).applies(probe.info, &why)) << c.what << ": " << why;
      HostTensor got = run_tactic(in, c.p, tactic);
      expect_matches(got, attention_reference(in, c.p, cuda::numel(probe.info.outputs[0].opt)),
                     tactic + " " + dtype_name(dt) + " " + c.what + " L=" + std::to_string(l));
    }
  }
}

TEST(EngineCudaAttentionViews, FlashRefusesUnalignedViews) {
  AttentionParams p;
  for (int i = 0; i < 3; ++i)
    p.view(i) = strided_view({2, 3, 5, 8}, {73, 8, 146, 1}, 24 * i + 1);  // odd offsets
  HostTensor x(DType::Float16, {5, 2, 73});
  ViewLayer t({x, x, x}, p);
  std::string why;
  EXPECT_FALSE(tactic_row("flash").applies(t.info, &why));
  EXPECT_NE(why.find("16-byte"), std::string::npos) << why;
}

TEST(EngineCuda, AttentionViewsFlash) {
  KILN_REQUIRE_GPU();
  for (const char* flash : {"flash", "flash_wide", "flash_tall"}) {
    check_tactic(flash, {DType::Float16, DType::BFloat16}, 5, 8);
    check_tactic(flash, {DType::Float16, DType::BFloat16}, 130, 64);  // several query / key tiles
  }
}

TEST(EngineCuda, AttentionViewsGeneric) {
  KILN_REQUIRE_GPU();
  check_tactic("generic", {DType::Float32, DType::Float16, DType::BFloat16}, 5, 8);
  check_tactic("generic", {DType::Float32}, 70, 20);
}

TEST(EngineCuda, AttentionViewsUnalignedGeneric) {
  KILN_REQUIRE_GPU();
  AttentionParams p;
  for (int i = 0; i < 3; ++i) p.view(i) = strided_view({2, 3, 5, 8}, {73, 8, 146, 1}, 24 * i + 1);
  std::mt19937 rng(902);
  for (DType dt : {DType::Float32, DType::Float16}) {
    HostTensor x = random_tensor(DType::Float32, {5, 2, 73}, rng).to(dt);
    HostTensor got = run_tactic({x, x, x}, p, "generic");
    expect_matches(got, attention_reference({x, x, x}, p, 2 * 3 * 5 * 8),
                   std::string("generic unaligned ") + dtype_name(dt));
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
