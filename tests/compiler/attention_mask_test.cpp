// compiler::compile on a program shaped like the attention-mask construction of transformers 5.x
// (masking_utils.sdpa_mask without vmap, as torch.export writes it for BERT with a dynamic batch and
// sequence): arange over the symbolic sizes, unsqueezes, padding_mask_function's attention_mask[batch_idx,
// kv_idx] (index.Tensor with two broadcast index tensors over symbolic dims), a causal kv_idx <= q_idx,
// and_masks, expand, then attention with that mask. The whole program must run in engines; outputs are
// compared with the libtorch reference at several batch and sequence sizes.

#include <random>

#include <gtest/gtest.h>

#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/text.h"
#include "kiln/runtime/libtorch_node_executor.h"

namespace kiln::compiler {
namespace {

using testing_util::closeness;

constexpr const char* kMaskProgram = R"(graph(%input_ids: i64[s43, s53], %attention_mask: i64[s43, s53]) {
  symbol s43 in [1, 8] hint 2
  symbol s53 in [4, 64] hint 16
  %emb: f32[50, 16] = parameter("embeddings.weight")
  %sym_size_int_11: sym_int(s43) = aten.sym_size.int(self=%attention_mask, dim=0)
  %sym_size_int_12: sym_int(s53) = aten.sym_size.int(self=%attention_mask, dim=1)
  %embedding: f32[s43, s53, 16] = aten.embedding.default(weight=%emb, indices=%input_ids, padding_idx=-1, scale_grad_by_freq=False, sparse=False)
  %to: bool[s43, s53] = aten.to.device(self=%attention_mask, device=device("cpu"), dtype=dtype.bool, non_blocking=False, copy=False, memory_format=None)
  %arange: i64[s43] = aten.arange.default(end=%sym_size_int_11, *, dtype=None, layout=None, device=device("cpu"), pin_memory=False)
  %arange_1: i64[1] = aten.arange.default(end=1, *, dtype=None, layout=None, device=device("cpu"), pin_memory=False)
  %arange_2: i64[s53] = aten.arange.default(end=%sym_size_int_12, *, dtype=None, layout=None, device=device("cpu"), pin_memory=False)
  %add_4: i64[s53] = aten.add.Tensor(self=%arange_2, other=0, *, alpha=1)
  %arange_3: i64[s53] = aten.arange.default(end=%sym_size_int_12, *, dtype=None, layout=None, device=device("cpu"), pin_memory=False)
  %add_5: i64[s53] = aten.add.Tensor(self=%arange_3, other=0, *, alpha=1)
  %unsqueeze: i64[s43, 1] = aten.unsqueeze.default(self=%arange, dim=1)
  %unsqueeze_1: i64[s43, 1, 1] = aten.unsqueeze.default(self=%unsqueeze, dim=2)
  %unsqueeze_2: i64[s43, 1, 1, 1] = aten.unsqueeze.default(self=%unsqueeze_1, dim=3)
  %unsqueeze_3: i64[1, 1] = aten.unsqueeze.default(self=%arange_1, dim=0)
  %unsqueeze_4: i64[1, 1, 1] = aten.unsqueeze.default(self=%unsqueeze_3, dim=2)
  %unsqueeze_5: i64[1, 1, 1, 1] = aten.unsqueeze.default(self=%unsqueeze_4, dim=3)
  %unsqueeze_6: i64[1, s53] = aten.unsqueeze.default(self=%add_4, dim=0)
  %unsqueeze_7: i64[1, 1, s53] = aten.unsqueeze.default(self=%unsqueeze_6, dim=1)
  %unsqueeze_8: i64[1, 1, s53, 1] = aten.unsqueeze.default(self=%unsqueeze_7, dim=3)
  %unsqueeze_9: i64[1, s53] = aten.unsqueeze.default(self=%add_5, dim=0)
  %unsqueeze_10: i64[1, 1, s53] = aten.unsqueeze.default(self=%unsqueeze_9, dim=1)
  %unsqueeze_11: i64[1, 1, 1, s53] = aten.unsqueeze.default(self=%unsqueeze_10, dim=2)
  %new_ones: bool[] = aten.new_ones.default(self=%unsqueeze_8, size=[], *, dtype=dtype.bool, layout=None, device=None, pin_memory=False)
  %ge: bool[1, 1, s53, 1] = aten.ge.Scalar(self=%unsqueeze_8, other=0)
  %to_1: bool[1, 1, s53, 1] = aten.to.dtype_layout(self=%ge, *, dtype=dtype.bool, layout=layout.strided, device=device("cpu"), pin_memory=None, non_blocking=False, copy=False, memory_format=None)
  %and_1: bool[1, 1, s53, 1] = aten.__and__.Tensor(self=%new_ones, other=%to_1)
  %le: bool[1, 1, s53, s53] = aten.le.Tensor(self=%unsqueeze_11, other=%unsqueeze_8)
  %and_causal: bool[1, 1, s53, s53] = aten.__and__.Tensor(self=%and_1, other=%le)
  %index: bool[s43, 1, 1, s53] = aten.index.Tensor(self=%to, indices=?[%unsqueeze_2, %unsqueeze_11])
  %to_2: bool[s43, 1, 1, s53] = aten.to.dtype_layout(self=%index, *, dtype=dtype.bool, layout=layout.strided, device=device("cpu"), pin_memory=None, non_blocking=False, copy=False, memory_format=None)
  %and_2: bool[s43, 1, s53, s53] = aten.__and__.Tensor(self=%and_causal, other=%to_2)
  %expand_2: bool[s43, 1, s53, s53] = aten.expand.default(self=%and_2, size=[%sym_size_int_11, -1, %sym_size_int_12, %sym_size_int_12], *, implicit=False)
  %q: f32[s43, 1, s53, 16] = aten.unsqueeze.default(self=%embedding, dim=1)
  %attn: f32[s43, 1, s53, 16] = aten.scaled_dot_product_attention.default(query=%q, key=%q, value=%q, attn_mask=%expand_2, dropout_p=0.0, is_causal=False, *, scale=0.25, enable_gqa=False)
  return (%attn, %expand_2)
})";

// input_ids in [0, 50); attention_mask 1 on a prefix of random length >= 1 per row (left-aligned padding, so
// every query row keeps key 0 and no softmax row is empty).
std::vector<HostTensor> mask_inputs(int64_t batch, int64_t seq, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> token(0, 49);
  std::uniform_int_distribution<int64_t> length(1, seq);
  HostTensor ids(DType::Int64, {batch, seq}), mask(DType::Int64, {batch, seq});
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t valid = length(rng);
    for (int64_t s = 0; s < seq; ++s) {
      ids.set_from_double(b * seq + s, static_cast<double>(token(rng)));
      mask.set_from_double(b * seq + s, s < valid ? 1 : 0);
    }
  }
  return {ids, mask};
}

// Tolerance: the mask output is boolean and must be equal; attention is fp32 against libtorch's fp32 (softmax
// and two small matrix products, summed in another order): cosine >= 0.9999 and max abs <= 1e-4.
TEST(CompileAttentionMask, TransformersMaskWithDynamicBatchAndSequenceRunsInEngines) {
  frontend::Program program;
  program.graph = ir::parse_graph(kMaskProgram);
  std::mt19937 rng(2024);
  std::normal_distribution<double> normal(0.0, 1.0);
  HostTensor weights(DType::Float32, {50, 16});
  for (int64_t i = 0; i < weights.numel(); ++i) weights.set_from_double(i, normal(rng));
  program.graph->find_value("emb")->set_data(weights);
  program.output_kinds.assign(program.graph->outputs().size(), frontend::OutputKind::UserOutput);

  CompilationSettings settings;
  CompileReport report;
  auto module = compile(program, settings, {}, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(report.torch_nodes, 0u) << report.to_string();
  EXPECT_GT(report.engine_nodes, 0u);
  EXPECT_TRUE(report.fallbacks.empty()) << report.to_string();

  uint32_t seed = 11;
  for (auto [batch, seq] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 16}, {1, 4}, {3, 37}, {8, 64}, {5, 9}}) {
    SCOPED_TRACE("batch " + std::to_string(batch) + ", sequence " + std::to_string(seq));
    const auto inputs = mask_inputs(batch, seq, seed++);
    const auto want = runtime::run_in_libtorch(*program.graph, inputs);
    const auto got = module->execute_host(inputs);
    const std::vector<size_t> users = module->user_output_indices();
    ASSERT_EQ(users.size(), want.size());
    const HostTensor& attn = got[users[0]];
    const HostTensor& mask = got[users[1]];
    auto c = closeness(attn, want[0]);
    ASSERT_TRUE(c.same_shape);
    EXPECT_GE(c.cosine, 0.9999);
    EXPECT_LE(c.max_abs, 1e-4);
    ASSERT_EQ(mask.sizes(), want[1].sizes());
    ASSERT_EQ(mask.dtype(), DType::Bool);
    for (int64_t i = 0; i < mask.numel(); ++i) {
      ASSERT_EQ(mask.get_as_double(i), want[1].get_as_double(i)) << "mask element " << i;
    }
  }
}

}  // namespace
}  // namespace kiln::compiler
